package io.jakri.handler.udev;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.testkit.DiscoveringPluginJarContract;
import io.jakri.handler.testkit.PluginJar;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * The packaged jar meets the plugin-jar contract, with RE2/J relocated inside; the sample is Akri's
 * own end-to-end Configuration ({@code KERNEL=="null"}) on this machine's sysfs.
 */
class UdevPluginIT extends DiscoveringPluginJarContract {

  @Override
  protected String pluginId() {
    return "udev";
  }

  @Override
  protected String handlerClass() {
    return "io.jakri.handler.udev.UdevHandler";
  }

  @Override
  protected String handlerName() {
    return "udev";
  }

  @Override
  protected Map.Entry<String, String> invalidDetails() {
    return Map.entry(
        "udevRules:\n- ACTION==\"add\"\n",
        "udevRules[0] \"ACTION==\"add\"\": column 1: unsupported field ACTION");
  }

  @Override
  protected Sample sample() {
    return new Sample(
        "akri-udev-dev-null",
        "node-a",
        "udevRules:\n  - KERNEL==\"null\"\npermissions: rwm\n",
        List.of("/devices/virtual/mem/null"));
  }

  @Test
  void jarCarriesRe2jRelocated() throws Exception {
    try (JarFile jar = new JarFile(PluginJar.packagedJar().toFile())) {
      List<String> names = jar.stream().map(JarEntry::getName).toList();
      assertThat(names)
          .contains("io/jakri/handler/udev/shaded/re2j/Pattern.class")
          .noneMatch(n -> n.startsWith("com/google/"));
    }
  }
}
