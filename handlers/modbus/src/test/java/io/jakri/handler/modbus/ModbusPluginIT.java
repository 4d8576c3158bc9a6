package io.jakri.handler.modbus;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.testkit.DiscoveringPluginJarContract;
import io.jakri.handler.testkit.PluginJar;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The packaged jar meets the discovering plugin-jar contract of the testkit (no private library
 * inside), its sample run finding a scripted loopback peer ({@link FakePeers}). Discovery against a
 * real Modbus server: {@code ModbusPymodbusIT}.
 */
class ModbusPluginIT extends DiscoveringPluginJarContract {

  private static FakePeers peers;
  private static FakePeers.Peer plc;

  @BeforeAll
  static void startPeer() throws Exception {
    peers = new FakePeers();
    plc = peers.start(FakePeers.identifying(10, "Acme", "PC-1", "1.0"));
  }

  @AfterAll
  static void stopPeer() throws Exception {
    peers.close();
  }

  @Override
  protected Sample sample() {
    return new Sample(
        "modbus-plcs",
        "node-a",
        "addresses: [127.0.0.1]\nports: [" + plc.port() + "]\nunitIds: [1]\n",
        List.of("tcp://127.0.0.1:" + plc.port() + "/1"));
  }

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
