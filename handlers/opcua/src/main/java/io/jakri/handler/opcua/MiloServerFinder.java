package io.jakri.handler.opcua;

import static org.eclipse.milo.opcua.stack.core.types.builtin.unsigned.Unsigned.ubyte;
import static org.eclipse.milo.opcua.stack.core.types.builtin.unsigned.Unsigned.uint;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import org.eclipse.milo.opcua.stack.client.DiscoveryClient;
import org.eclipse.milo.opcua.stack.client.UaStackClient;
import org.eclipse.milo.opcua.stack.client.UaStackClientConfig;
import org.eclipse.milo.opcua.stack.core.UaException;
import org.eclipse.milo.opcua.stack.core.security.SecurityPolicy;
import org.eclipse.milo.opcua.stack.core.transport.TransportProfile;
import org.eclipse.milo.opcua.stack.core.types.builtin.LocalizedText;
import org.eclipse.milo.opcua.stack.core.types.enumerated.ApplicationType;
import org.eclipse.milo.opcua.stack.core.types.enumerated.MessageSecurityMode;
import org.eclipse.milo.opcua.stack.core.types.structured.ApplicationDescription;
import org.eclipse.milo.opcua.stack.core.types.structured.EndpointDescription;
import org.eclipse.milo.opcua.stack.core.types.structured.FindServersResponse;

/**
 * FindServers through Eclipse Milo's {@link DiscoveryClient}: one TCP connection per call (Hello,
 * OpenSecureChannel with SecurityPolicy None, FindServers, CloseSecureChannel), on the shared
 * {@link MiloTransport} and with the agent's scheduler as Milo's executor, so nothing blocks and
 * Milo's static thread pools stay unused. Answers are bounded by Milo's default encoding limits (2
 * MiB per message, 65,535 array entries).
 *
 * <p>Each call makes one Milo client (about 0.6 MB allocated, 0.3 MB live until it ends: every
 * client registers Milo's built-in type codecs twice), and the client is disconnected however the
 * returned future completes: with the answer, with Milo's own failure, or by the caller giving up
 * (deadline, close), so nothing of a request outlives it by more than Milo's next timeout.
 * Thread-safe.
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
    UaStackClient client;
    try {
      client = UaStackClient.create(config(url));
    } catch (UaException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    CompletableFuture<List<Application>> result = new CompletableFuture<>();
    // However it ends, the client goes (a no-op when it never connected).
    result.whenComplete((apps, error) -> client.disconnect());
    try {
      new DiscoveryClient(client)
          .connect()
          .thenCompose(discovery -> discovery.findServers(url.text(), new String[0], new String[0]))
          .whenComplete(
              (response, error) -> {
                if (error != null) {
                  result.completeExceptionally(error);
                } else {
                  result.complete(applications(response));
                }
              });
    } catch (RuntimeException e) {
      result.completeExceptionally(e);
    }
    return result;
  }

  private UaStackClientConfig config(OpcTcpUrl url) {
    EndpointDescription endpoint =
        new EndpointDescription(
            url.text(),
            null,
            null,
            MessageSecurityMode.None,
            SecurityPolicy.None.getUri(),
            null,
            TransportProfile.TCP_UASC_UABINARY.getUri(),
            ubyte(0));
    return UaStackClientConfig.builder()
        .setEndpoint(endpoint)
        .setEventLoop(transport.eventLoop())
        .setWheelTimer(transport.timer())
        .setExecutor(scheduler)
        .setScheduledExecutor(scheduler)
        .setConnectTimeout(uint(connectTimeout.toMillis()))
        .setAcknowledgeTimeout(uint(connectTimeout.toMillis()))
        .setRequestTimeout(uint(requestTimeout.toMillis()))
        .build();
  }

  private static List<Application> applications(FindServersResponse response) {
    ApplicationDescription[] servers = response.getServers();
    return servers == null
        ? List.of()
        : Arrays.stream(servers).map(MiloServerFinder::application).toList();
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
