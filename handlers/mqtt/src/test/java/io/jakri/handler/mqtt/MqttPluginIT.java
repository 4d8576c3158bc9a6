package io.jakri.handler.mqtt;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.testkit.PluginJar;
import io.jakri.handler.testkit.PluginJarContract;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * The packaged jar meets the plugin-jar contract of the testkit, with Paho shaded and relocated
 * inside. Discovery needs a broker: {@code MqttMosquittoIT} covers it against mosquitto.
 */
class MqttPluginIT extends PluginJarContract {

  @Override
  protected String pluginId() {
    return "mqtt";
  }

  @Override
  protected String handlerClass() {
    return "io.jakri.handler.mqtt.MqttHandler";
  }

  @Override
  protected String handlerName() {
    return "mqtt";
  }

  @Override
  protected Map.Entry<String, String> invalidDetails() {
    return Map.entry("brokers: [http://x]", "brokers[0] (line 1, column 11): must be tcp://");
  }

  @Test
  void jarCarriesPahoRelocated() throws Exception {
    try (JarFile jar = new JarFile(PluginJar.packagedJar().toFile())) {
      List<String> names = jar.stream().map(JarEntry::getName).toList();
      assertThat(names)
          .contains("io/jakri/handler/mqtt/shaded/paho/client/mqttv3/MqttAsyncClient.class")
          .noneMatch(n -> n.startsWith("org/eclipse/"))
          .noneMatch(n -> n.equals("META-INF/INDEX.LIST"));
    }
  }
}
