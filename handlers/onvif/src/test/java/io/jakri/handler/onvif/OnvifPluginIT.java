package io.jakri.handler.onvif;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.Validation;
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
 * The packaged jar meets the plugin-jar contract of the testkit and carries no library of its own.
 * Discovery itself needs a network: {@code OnvifCameraIT} and {@code OnvifWsddIT} cover it.
 */
class OnvifPluginIT extends PluginJarContract {

  @Override
  protected String pluginId() {
    return "onvif";
  }

  @Override
  protected String handlerClass() {
    return "io.jakri.handler.onvif.OnvifHandler";
  }

  @Override
  protected String handlerName() {
    return "onvif";
  }

  @Override
  protected Map.Entry<String, String> invalidDetails() {
    return Map.entry(
        "discoveryTimeoutSeconds: 0", "discoveryTimeoutSeconds must be between 1 and 60");
  }

  @Test
  void jarHoldsOnlyTheHandlersOwnClasses() throws Exception {
    try (JarFile jar = new JarFile(PluginJar.packagedJar().toFile())) {
      List<String> classes =
          jar.stream().map(JarEntry::getName).filter(n -> n.endsWith(".class")).toList();
      assertThat(classes).isNotEmpty().allMatch(n -> n.startsWith("io/jakri/handler/onvif/"));
    }
  }

  @Test
  void validationFromTheJarReportsEveryErrorOfAnAkriStyleConfiguration(@TempDir Path plugins)
      throws Exception {
    DiscoveryContext context =
        new DiscoveryContext(
            "cams",
            "node",
            "ipAddresses: {action: Include, items: [10.0.0.256]}\n"
                + "macAddresses: {action: Exclude, items: [nope]}\n"
                + "discoveryTimeoutSeconds: 3600",
            Map.of(),
            scheduler);
    Validation v = load(plugins).handler().validate(context);
    assertThat(v.errors())
        .containsExactly(
            "ipAddresses.items[0] must be an IPv4 or IPv6 address such as 10.0.0.1 but is"
                + " \"10.0.0.256\"",
            "macAddresses.items[0] must be a MAC address such as 00:12:41:5c:a1:a5 but is \"nope\"",
            "discoveryTimeoutSeconds must be between 1 and 60 (how long ProbeMatches are"
                + " collected; cameras answer within a second) but is 3600");
  }

  @Test
  void probingOnAMissingInterfaceReportsNoCamerasAndClosesPromptly(@TempDir Path plugins)
      throws Exception {
    RecordingListener listener = new RecordingListener();
    DiscoveryContext context =
        new DiscoveryContext("cams", "node", "interfaces: [onvif-none0]", Map.of(), scheduler);
    Discovery discovery = load(plugins).handler().start(context, listener);
    await().atMost(Duration.ofSeconds(10)).until(() -> !listener.snapshots().isEmpty());
    long begin = System.nanoTime();
    discovery.close();
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin)).isLessThan(500);
    assertThat(listener.snapshots()).containsExactly(List.of());
    assertThat(listener.failures()).isEmpty();
  }
}
