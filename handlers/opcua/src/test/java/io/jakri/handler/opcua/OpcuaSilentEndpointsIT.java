package io.jakri.handler.opcua;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.testkit.PluginJar;
import io.jakri.handler.testkit.RecordingListener;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The handler from the packaged plugin jar (Milo shaded inside, its 3 s connect and Hello timeouts)
 * polling many endpoints on loopback that never answer ({@link SilentServers}): what it holds stays
 * bounded however many Configurations poll them, round after round, and nothing is left once they
 * close. Loopback only, no node-opcua needed.
 */
class OpcuaSilentEndpointsIT {

  /** OpcuaHandler.MAX_REQUESTS (the ITs see the plugin jar, not the module's classes). */
  private static final int HANDLER_BOUND = 32;

  /** OpcuaDiscovery.MAX_IN_FLIGHT. */
  private static final int CONFIGURATION_BOUND = 16;

  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final List<AutoCloseable> cleanUp = new ArrayList<>();
  private Path pluginsDir;

  @AfterEach
  void stop() throws Exception {
    for (int i = cleanUp.size() - 1; i >= 0; i--) {
      cleanUp.get(i).close();
    }
    scheduler.shutdownNow();
    if (pluginsDir != null) {
      try (var files = Files.list(pluginsDir)) {
        for (Path p : files.toList()) {
          Files.deleteIfExists(p);
        }
      }
      Files.deleteIfExists(pluginsDir);
    }
  }

  private static long opcuaThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("jakri-opcua-"))
        .count();
  }

  @Test
  void configurationsOfSilentUrlsTogetherHoldAtMostTheHandlersBoundOfConnectionsAndLeaveNone()
      throws Exception {
    SilentServers servers = SilentServers.start(64, 8);
    cleanUp.add(servers);
    pluginsDir = Files.createTempDirectory("jakri-opcua-plugins-");
    PluginJar plugin = PluginJar.loadPackaged(pluginsDir);
    cleanUp.add(plugin);
    DiscoveryHandler handler = plugin.handler();
    List<String> urls = new ArrayList<>(servers.silentUrls());
    urls.addAll(servers.unreachableUrls());

    // Four Configurations of 18 URLs: 16 of each may run at once, 64 in all without a bound
    // shared by the Configurations.
    List<Discovery> discoveries = new ArrayList<>();
    for (int c = 0; c < 4; c++) {
      StringBuilder yaml =
          new StringBuilder("opcuaDiscoveryMethod:\n  standard:\n    discoveryUrls:\n");
      for (int i = c; i < urls.size(); i += 4) {
        yaml.append("    - ").append(urls.get(i)).append('\n');
      }
      yaml.append("pollIntervalSeconds: 1\n");
      Discovery discovery =
          handler.start(
              new DiscoveryContext("silent-" + c, "node-it", yaml.toString(), Map.of(), scheduler),
              new RecordingListener());
      discoveries.add(discovery);
      cleanUp.add(discovery);
    }

    // Every silent endpoint asked at least twice: two rounds of every URL failing.
    await("two rounds")
        .atMost(Duration.ofSeconds(120))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> {
              assertThat(opcuaThreads()).isLessThanOrEqualTo(2); // one I/O, one timer thread
              return servers.fewestAcceptedByOne() >= 2;
            });

    assertThat(servers.maxOpen())
        .as("connections open at once")
        .isLessThanOrEqualTo(HANDLER_BOUND)
        .isGreaterThan(CONFIGURATION_BOUND); // the Configurations did run side by side

    discoveries.forEach(Discovery::close);
    await("every connection closed by the client")
        .atMost(Duration.ofSeconds(10))
        .until(() -> servers.open() == 0);
    await("the handler's threads ended")
        .atMost(Duration.ofSeconds(10))
        .until(() -> opcuaThreads() == 0);
  }
}
