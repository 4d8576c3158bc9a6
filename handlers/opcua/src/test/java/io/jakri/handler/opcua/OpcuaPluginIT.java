package io.jakri.handler.opcua;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.testkit.PluginJar;
import io.jakri.handler.testkit.PluginJarContract;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * The packaged jar meets the plugin-jar contract of the testkit, with Milo and its libraries shaded
 * and relocated inside. Discovery itself: {@code OpcuaNodeOpcuaIT}.
 */
class OpcuaPluginIT extends PluginJarContract {

  @Override
  protected String pluginId() {
    return "opcua";
  }

  @Override
  protected String handlerClass() {
    return "io.jakri.handler.opcua.OpcuaHandler";
  }

  @Override
  protected String handlerName() {
    return "opcua";
  }

  @Override
  protected Map.Entry<String, String> invalidDetails() {
    return Map.entry(
        "opcuaDiscoveryMethod:\n  standard:\n    discoveryUrls: [\"http://plc:4840/\"]\n",
        "opcuaDiscoveryMethod.standard.discoveryUrls[0] must be an opc.tcp://host:port/ URL");
  }

  @Test
  void jarCarriesMiloAndItsLibrariesRelocatedOnly() throws Exception {
    try (JarFile jar = new JarFile(PluginJar.packagedJar().toFile())) {
      List<String> names = jar.stream().map(JarEntry::getName).toList();
      assertThat(names)
          .contains("io/jakri/handler/opcua/shaded/milo/opcua/stack/client/DiscoveryClient.class")
          .contains("io/jakri/handler/opcua/shaded/netty/channel/nio/NioEventLoopGroup.class")
          .noneMatch(n -> n.startsWith("org/eclipse/milo/"))
          .noneMatch(n -> n.startsWith("io/netty/"))
          .noneMatch(n -> n.startsWith("com/google/"))
          .noneMatch(n -> n.startsWith("org/bouncycastle/"))
          .noneMatch(n -> n.startsWith("org/slf4j/"))
          .noneMatch(n -> n.equals("META-INF/INDEX.LIST"));
    }
    long bytes = Files.size(PluginJar.packagedJar());
    System.out.println("OPCUA_PLUGIN_JAR bytes=" + bytes);
    assertThat(bytes).isLessThan(16L * 1024 * 1024);
  }
}
