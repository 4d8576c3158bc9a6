package io.jakri.handler.opcua;

import static org.eclipse.milo.opcua.stack.core.types.builtin.unsigned.Unsigned.uint;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import org.eclipse.milo.opcua.stack.client.DiscoveryClient;
import org.eclipse.milo.opcua.stack.core.types.builtin.LocalizedText;
import org.eclipse.milo.opcua.stack.core.types.enumerated.ApplicationType;
import org.eclipse.milo.opcua.stack.core.types.structured.ApplicationDescription;

/**
 * FindServers through Eclipse Milo's {@link DiscoveryClient}: one TCP connection per call (Hello,
 * OpenSecureChannel with SecurityPolicy None, FindServers, CloseSecureChannel), on the shared
 * {@link MiloTransport} and with the agent's scheduler as Milo's executor, so nothing blocks and
 * Milo's static thread pools stay unused. Answers are bounded by Milo's default encoding limits (2
 * MiB per message, 65,535 array entries). Thread-safe.
 */
final class MiloServerFinder implements ServerFinder {

  private final MiloTransport.Lease transport;
  private final ScheduledExecutorService scheduler;
  private final Duration connectTimeout;
  private final Duration requestTimeout;

  MiloServerFinder(
      MiloTransport.Lease transport,
      ScheduledExecutorService scheduler,
      Duration connectTimeout,
      Duration requestTimeout) {
    this.transport = transport;
    this.scheduler = scheduler;
    this.connectTimeout = connectTimeout;
    this.requestTimeout = requestTimeout;
  }

  @Override
  public CompletableFuture<List<Application>> findServers(OpcTcpUrl url) {
    try {
      return DiscoveryClient.findServers(
              url.text(),
              config ->
                  config
                      .setEventLoop(transport.eventLoop())
                      .setWheelTimer(transport.timer())
                      .setExecutor(scheduler)
                      .setScheduledExecutor(scheduler)
                      .setConnectTimeout(uint(connectTimeout.toMillis()))
                      .setAcknowledgeTimeout(uint(connectTimeout.toMillis()))
                      .setRequestTimeout(uint(requestTimeout.toMillis())))
          .thenApply(list -> list.stream().map(MiloServerFinder::application).toList());
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  static Application application(ApplicationDescription description) {
    LocalizedText name = description.getApplicationName();
    String[] urls = description.getDiscoveryUrls();
    return new Application(
        name == null ? "" : name.getText(),
        type(description.getApplicationType()),
        urls == null ? List.of() : Arrays.asList(urls));
  }

  private static Application.Type type(ApplicationType type) {
    if (type == null) {
      return Application.Type.UNKNOWN;
    }
    return switch (type) {
      case Server -> Application.Type.SERVER;
      case Client -> Application.Type.CLIENT;
      case ClientAndServer -> Application.Type.CLIENT_AND_SERVER;
      case DiscoveryServer -> Application.Type.DISCOVERY_SERVER;
    };
  }
}
