package io.jakri.agent.external;

import com.google.protobuf.ByteString;
import io.jakri.handler.DeviceListener;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import v0.Discovery.ByteData;
import v0.Discovery.DiscoverRequest;

/**
 * One registered external handler name, presented as a {@link DiscoveryHandler}: {@link #start}
 * calls {@code Discover} on every endpoint registered under the name (now and later) with the
 * Configuration's {@code discoveryDetails} and its resolved {@code discoveryProperties} as bytes.
 * The handler checks its details itself: {@link #validate} accepts everything and an {@code
 * InvalidArgument} answer makes {@link #start} throw {@link InvalidDetailsException}.
 */
final class ExternalHandler implements DiscoveryHandler {

  private final String name;
  private final ExternalHandlers handlers;

  ExternalHandler(String name, ExternalHandlers handlers) {
    this.name = name;
    this.handlers = handlers;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public Validation validate(DiscoveryContext context) {
    return Validation.ok();
  }

  @Override
  public Discovery start(DiscoveryContext context, DeviceListener listener)
      throws InvalidDetailsException {
    Map<String, byte[]> bytes;
    try {
      bytes = handlers.propertyBytes().of(context.configurationName()).orElse(null);
    } catch (Exception e) {
      // resolved as text a moment ago; a failure now is transient: the start is retried
      throw new IllegalStateException(
          "discoveryProperties of " + context.configurationName() + ": " + e.getMessage());
    }
    ExternalDiscovery discovery =
        new ExternalDiscovery(
            name, context.configurationName(), handlers, request(context, bytes), listener);
    discovery.start();
    return discovery;
  }

  /**
   * Akri's request: the details as text, each property's value as its bytes ({@code bytes}, when
   * known) or else as its text in UTF-8.
   */
  static DiscoverRequest request(DiscoveryContext context, Map<String, byte[]> bytes) {
    DiscoverRequest.Builder request =
        DiscoverRequest.newBuilder().setDiscoveryDetails(context.discoveryDetails());
    if (bytes != null) {
      for (Map.Entry<String, byte[]> p : bytes.entrySet()) {
        request.putDiscoveryProperties(
            p.getKey(), ByteData.newBuilder().setVec(ByteString.copyFrom(p.getValue())).build());
      }
      return request.build();
    }
    for (Map.Entry<String, String> p : context.discoveryProperties().entrySet()) {
      request.putDiscoveryProperties(
          p.getKey(),
          ByteData.newBuilder()
              .setVec(ByteString.copyFrom(p.getValue(), StandardCharsets.UTF_8))
              .build());
    }
    return request.build();
  }

  @Override
  public String toString() {
    return "external discovery handler " + name;
  }
}
