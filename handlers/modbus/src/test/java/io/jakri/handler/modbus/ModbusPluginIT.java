package io.jakri.handler.modbus;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.testkit.PluginJar;
import io.jakri.handler.testkit.PluginJarContract;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * The packaged jar meets the plugin-jar contract of the testkit (no private library inside).
 * Discovery against a real Modbus server: {@code ModbusPymodbusIT}.
 */
class ModbusPluginIT extends PluginJarContract {

  @Override
  protected String pluginId() {
    return "modbus";
  }

  @Override
  protected String handlerClass() {
    return "io.jakri.handler.modbus.ModbusHandler";
  }

  @Override
  protected String handlerName() {
    return "modbus";
  }

  @Override
  protected Map.Entry<String, String> invalidDetails() {
    return Map.entry(
        "addresses: [10.0.0.0/8]\n",
        "addresses[0] \"10.0.0.0/8\": 16777216 addresses, more than maxAddresses (256)");
  }

  @Test
  void jarHoldsOnlyTheHandlersOwnClasses() throws Exception {
    try (JarFile jar = new JarFile(PluginJar.packagedJar().toFile())) {
      List<String> classes =
          jar.stream().map(JarEntry::getName).filter(n -> n.endsWith(".class")).toList();
      assertThat(classes).isNotEmpty().allMatch(n -> n.startsWith("io/jakri/handler/modbus/"));
    }
  }
}
