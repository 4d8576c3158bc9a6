package io.jakri.handler.zeroconf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.testkit.PluginJar;
import io.jakri.handler.testkit.PluginJarContract;
import io.jakri.handler.testkit.RecordingListener;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged jar meets the plugin-jar contract of the testkit, with JmDNS shaded and relocated
 * inside. Discovery itself needs a network: {@code ZeroconfAvahiIT} covers it against avahi.
 */
class ZeroconfPluginIT extends PluginJarContract {

  @Override
  protected String pluginId() {
    return "zeroconf";
  }

  @Override
  protected String handlerClass() {
    return "io.jakri.handler.zeroconf.ZeroconfHandler";
  }

  @Override
  protected String handlerName() {
    return "zeroconf";
  }

  @Override
  protected Map.Entry<String, String> invalidDetails() {
    return Map.entry("kind: nope", "kind must be a DNS-SD service type");
  }

  @Test
  void jarCarriesJmdnsRelocatedAndNoIndexList() throws Exception {
    try (JarFile jar = new JarFile(PluginJar.packagedJar().toFile())) {
      List<String> names = jar.stream().map(JarEntry::getName).toList();
      assertThat(names)
          .contains("io/jakri/handler/zeroconf/shaded/jmdns/JmDNS.class")
          .contains("io/jakri/handler/zeroconf/shaded/jmdns/impl/JmDNSImpl.class")
          .noneMatch(n -> n.equals("META-INF/INDEX.LIST"));
    }
  }

  @Test
  void discoveryOnAMissingInterfaceReportsFailureAndClosesPromptly(@TempDir Path plugins)
      throws Exception {
    RecordingListener listener = new RecordingListener();
    DiscoveryContext context =
        new DiscoveryContext(
            "zc", "node", "kind: _http._tcp\ninterfaces: [jkz-none0]", Map.of(), scheduler);

    Discovery discovery = load(plugins).handler().start(context, listener);
    await().atMost(Duration.ofSeconds(10)).until(() -> !listener.failures().isEmpty());
    long begin = System.nanoTime();
    discovery.close();

    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin)).isLessThan(500);
    assertThat(listener.failures()).containsExactly("none of interfaces [jkz-none0] is usable");
    assertThat(listener.snapshots()).isEmpty();
  }
}
