package io.jakri.handler.coap;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.Validation;
import io.jakri.handler.testkit.PluginJar;
import io.jakri.handler.testkit.PluginJarContract;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged jar meets the plugin-jar contract and carries Californium only shaded (relocated
 * under the handler's package).
 */
class CoapPluginIT extends PluginJarContract {

  @Override
  protected String pluginId() {
    return "coap";
  }

  @Override
  protected String handlerClass() {
    return "io.jakri.handler.coap.CoapHandler";
  }

  @Override
  protected String handlerName() {
    return "coap";
  }

  @Override
  protected Map.Entry<String, String> invalidDetails() {
    return Map.entry("responseTimeoutMillis: 0", "responseTimeoutMillis must be between 50");
  }

  @Test
  void jarHoldsOnlyTheHandlersClassesAndCaliforniumRelocated() throws Exception {
    try (JarFile jar = new JarFile(PluginJar.packagedJar().toFile())) {
      List<String> classes =
          jar.stream().map(JarEntry::getName).filter(n -> n.endsWith(".class")).toList();
      assertThat(classes).isNotEmpty().allMatch(n -> n.startsWith("io/jakri/handler/coap/"));
      assertThat(classes)
          .contains(
              "io/jakri/handler/coap/shaded/californium/core/network/serialization/"
                  + "UdpDataParser.class");
    }
  }

  @Test
  void validationFromTheJarReportsEveryErrorWithItsField(@TempDir Path plugins) throws Exception {
    DiscoveryContext context =
        new DiscoveryContext(
            "coap",
            "node",
            "hosts: [printer.local, \"10.0.0.1:70000\"]\n"
                + "rt: [\"two words\"]\n"
                + "paths: {include: [sensors]}\n"
                + "gracePeriodSeconds: -1",
            Map.of(),
            scheduler);
    Validation v = load(plugins).handler().validate(context);
    assertThat(v.errors())
        .containsExactly(
            "gracePeriodSeconds must be between 0 and 86400 but is -1",
            "hosts[0] must be an IP address with an optional port (10.0.0.5, 10.0.0.5:5684,"
                + " [fd00::1]:5683), but is \"printer.local\"",
            "hosts[1] must be an IP address with an optional port (10.0.0.5, 10.0.0.5:5684,"
                + " [fd00::1]:5683), but is \"10.0.0.1:70000\"",
            "rt[0] must be one rt value without spaces or quotes, but is \"two words\"",
            "paths.include[0] must be a path starting with / of at most 256 characters, but is"
                + " \"sensors\"");
  }

  @Test
  void yamlSyntaxErrorsNameLineAndColumn(@TempDir Path plugins) throws Exception {
    DiscoveryContext context =
        new DiscoveryContext("coap", "node", "hosts: [10.0.0.1\nrt: x", Map.of(), scheduler);
    Validation v = load(plugins).handler().validate(context);
    assertThat(v.errors())
        .containsExactly(
            "discoveryDetails: invalid YAML: while parsing a flow sequence at line 2, column 3");
  }
}
