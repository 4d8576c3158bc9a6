package io.jakri.charts;

import static io.jakri.charts.RenderedChart.get;
import static io.jakri.charts.RenderedChart.map;
import static io.jakri.charts.RenderedChart.maps;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.marcnuri.helm.Helm;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

class ConfigurationsTest {

  @Test
  void noConfigurationIsRenderedByDefault() {
    assertThat(RenderedChart.render().ofKind("Configuration")).isEmpty();
  }

  @Test
  void everyEnabledHandlerGetsOneValidConfiguration() {
    List<Map<String, Object>> configurations =
        RenderedChart.render("all-handlers-with-brokers.yaml").ofKind("Configuration");

    assertThat(configurations)
        .extracting(c -> get(c, "spec", "discoveryHandler", "name"))
        .containsExactly("zeroconf", "static", "simulated", "opcua");
    for (Map<String, Object> configuration : configurations) {
      String name = (String) get(configuration, "metadata", "name");
      assertThat(configuration.get("apiVersion")).isEqualTo("akri.sh/v0");
      assertThat(name).hasSizeLessThanOrEqualTo(56).matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
      assertThat(get(configuration, "metadata", "namespace")).isEqualTo("jakri");
      Map<String, Object> brokerSpec = map(get(configuration, "spec", "brokerSpec"));
      assertThat(brokerSpec.keySet())
          .as("exactly one broker kind in %s", name)
          .containsExactly(name.equals("simulated") ? "brokerJobSpec" : "brokerPodSpec");
      // discoveryDetails stays a YAML string the handler parses.
      Object details = get(configuration, "spec", "discoveryHandler", "discoveryDetails");
      assertThat(details).isInstanceOf(String.class);
      assertThat((Object) new Yaml().load((String) details)).isInstanceOf(Map.class);
    }
  }

  @Test
  void placeholderResourceSurvivesTemplatingLiterally() {
    RenderedChart chart = RenderedChart.render("all-handlers-with-brokers.yaml");

    Map<String, Object> podLimits =
        map(
            get(
                chart.one("Configuration", "zeroconf"),
                "spec",
                "brokerSpec",
                "brokerPodSpec",
                "containers",
                0,
                "resources",
                "limits"));
    assertThat(podLimits).containsEntry("{{PLACEHOLDER}}", "1");
    Map<String, Object> jobLimits =
        map(
            get(
                chart.one("Configuration", "simulated"),
                "spec",
                "brokerSpec",
                "brokerJobSpec",
                "template",
                "spec",
                "containers",
                0,
                "resources",
                "limits"));
    assertThat(jobLimits).containsEntry("{{PLACEHOLDER}}", "1");
  }

  @Test
  void brokerDefaultsAndPerHandlerServiceSpecsAreApplied() {
    RenderedChart chart = RenderedChart.render("all-handlers-with-brokers.yaml");
    Map<String, Object> zeroconf = chart.one("Configuration", "zeroconf");
    Map<String, Object> spec = map(zeroconf.get("spec"));

    assertThat(get(spec, "brokerSpec", "brokerPodSpec", "containers", 0, "image"))
        .isEqualTo("jakri/broker-template:0.1.0");
    assertThat(get(spec, "instanceServiceSpec", "type")).isEqualTo("ClusterIP");
    assertThat(spec).doesNotContainKey("configurationServiceSpec");
    Map<String, Object> staticSpec = map(chart.one("Configuration", "static-devices").get("spec"));
    assertThat(maps(get(staticSpec, "configurationServiceSpec", "ports")))
        .extracting(p -> p.get("port"))
        .containsExactly(80);
    assertThat(get(staticSpec, "brokerProperties", "GREETING")).isEqualTo("hello");
    assertThat(get(chart.one("Configuration", "simulated"), "spec", "capacity")).isEqualTo(2);
  }

  @Test
  void aHandlerWithoutBrokerHasNoBrokerSpec() {
    Map<String, Object> configuration =
        RenderedChart.parse(
                new Helm(RenderedChart.CHART)
                    .template()
                    .withName("jakri")
                    .set("handlers.simulated.enabled", "true")
                    .call())
            .one("Configuration", "simulated");

    assertThat(map(configuration.get("spec")))
        .doesNotContainKeys("brokerSpec", "instanceServiceSpec", "configurationServiceSpec");
  }

  @Test
  void namesLongerThan56CharactersAreRefused() {
    String name = "a".repeat(57);

    assertThatThrownBy(
            () ->
                new Helm(RenderedChart.CHART)
                    .template()
                    .withName("jakri")
                    .set("handlers.static.enabled", "true")
                    .set("handlers.static.name", name)
                    .call())
        .hasMessageContaining("longer than 56 characters");
  }

  @Test
  void aJobBrokerWithoutAJobSpecIsRefused() {
    assertThatThrownBy(
            () ->
                new Helm(RenderedChart.CHART)
                    .template()
                    .withName("jakri")
                    .set("handlers.zeroconf.enabled", "true")
                    .set("handlers.zeroconf.broker.enabled", "true")
                    .set("handlers.zeroconf.broker.kind", "job")
                    .call())
        .hasMessageContaining("broker.jobSpec is empty");
  }
}
