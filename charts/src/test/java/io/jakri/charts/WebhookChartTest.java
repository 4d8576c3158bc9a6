package io.jakri.charts;

import static io.jakri.charts.RenderedChart.get;
import static io.jakri.charts.RenderedChart.maps;
import static io.jakri.charts.RenderedChart.strings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The admission webhook's objects and the controller's flags for it, for each source of TLS. */
class WebhookChartTest {

  /** Renders with {@code key=value} sets. */
  static RenderedChart render(String... sets) {
    List<String> pairs = new java.util.ArrayList<>();
    for (String set : sets) {
      int eq = set.indexOf('=');
      pairs.add(set.substring(0, eq));
      pairs.add(set.substring(eq + 1));
    }
    return RenderedChart.render(RenderedChart.NAMESPACE, List.of(), pairs);
  }

  static Map<String, Object> controller(RenderedChart chart) {
    return maps(get(
            chart.one("Deployment", "jakri-controller"), "spec", "template", "spec", "containers"))
        .get(0);
  }

  @Test
  void byDefaultTheControllerServesItWithItsOwnCaAndMayPatchOnlyThatConfiguration() {
    RenderedChart chart = RenderedChart.render();
    Map<String, Object> webhook = chart.one("ValidatingWebhookConfiguration", "jakri-webhook");
    Map<String, Object> hook = maps(webhook.get("webhooks")).get(0);
    assertThat(get(hook, "clientConfig"))
        .isEqualTo(
            Map.of(
                "service",
                Map.of(
                    "name",
                    "jakri-webhook",
                    "namespace",
                    "jakri",
                    "path",
                    "/validate",
                    "port",
                    443)));
    assertThat(hook.get("failurePolicy")).isEqualTo("Ignore");
    assertThat(hook.get("sideEffects")).isEqualTo("None");
    assertThat(hook.get("timeoutSeconds")).isEqualTo(10);
    assertThat(hook).doesNotContainKey("namespaceSelector");
    assertThat(get(hook, "rules", 0))
        .isEqualTo(
            Map.of(
                "apiGroups", List.of("akri.sh"),
                "apiVersions", List.of("v0"),
                "resources", List.of("configurations"),
                "operations", List.of("CREATE", "UPDATE"),
                "scope", "Namespaced"));
    Map<String, Object> service = chart.one("Service", "jakri-webhook");
    assertThat(get(service, "spec", "selector"))
        .isEqualTo(
            get(chart.one("Deployment", "jakri-controller"), "spec", "selector", "matchLabels"));
    assertThat(get(service, "spec", "ports", 0, "targetPort")).isEqualTo("webhook");
    assertThat(strings(controller(chart).get("args")))
        .contains("--webhook-port=8443", "--webhook-configuration=jakri-webhook");
    assertThat(
            get(
                chart.one("ClusterRole", "jakri-jakri-controller-webhook"),
                "rules",
                0,
                "resourceNames"))
        .isEqualTo(List.of("jakri-webhook"));
    assertThat(chart.ofKind("Certificate")).isEmpty();
  }

  @Test
  void offRendersNothingOfIt() {
    RenderedChart chart = render("webhookConfiguration.enabled=false");
    assertThat(chart.ofKind("ValidatingWebhookConfiguration")).isEmpty();
    assertThat(chart.ofKind("Service")).isEmpty();
    assertThat(chart.ofKind("ClusterRole"))
        .extracting(r -> get(r, "metadata", "name"))
        .doesNotContain("jakri-jakri-controller-webhook");
    assertThat(strings(controller(chart).get("args"))).noneMatch(a -> a.startsWith("--webhook"));
    assertThat(render("controller.enabled=false").ofKind("ValidatingWebhookConfiguration"))
        .as("nothing would answer it")
        .isEmpty();
  }

  @Test
  void akrisCaBundleServesTheSecretNamedAfterTheWebhook() {
    RenderedChart chart =
        render(
            "webhookConfiguration.caBundle=Q0E=",
            "webhookConfiguration.name=akri-webhook-configuration");
    Map<String, Object> webhook =
        chart.one("ValidatingWebhookConfiguration", "akri-webhook-configuration");
    assertThat(get(webhook, "webhooks", 0, "clientConfig", "caBundle")).isEqualTo("Q0E=");
    Map<String, Object> controller = controller(chart);
    assertThat(strings(controller.get("args")))
        .contains("--webhook-port=8443", "--webhook-cert-dir=/etc/jakri/webhook")
        .noneMatch(a -> a.startsWith("--webhook-names") || a.startsWith("--webhook-configuration"));
    assertThat(maps(controller.get("volumeMounts")))
        .contains(
            Map.of("name", "webhook-tls", "mountPath", "/etc/jakri/webhook", "readOnly", true));
    assertThat(
            maps(
                get(
                    chart.one("Deployment", "jakri-controller"),
                    "spec",
                    "template",
                    "spec",
                    "volumes")))
        .contains(
            Map.of(
                "name",
                "webhook-tls",
                "secret",
                Map.of("secretName", "akri-webhook-configuration")));
    assertThat(chart.ofKind("ClusterRole"))
        .extracting(r -> get(r, "metadata", "name"))
        .doesNotContain("jakri-jakri-controller-webhook");
  }

  @Test
  void certManagerSignsItAndInjectsTheCa() {
    RenderedChart chart =
        render(
            "webhookConfiguration.certManager.enabled=true",
            "webhookConfiguration.certManager.issuerRef.name=cluster-ca",
            "webhookConfiguration.certManager.issuerRef.kind=ClusterIssuer");
    Map<String, Object> certificate = chart.one("Certificate", "jakri-webhook");
    assertThat(get(certificate, "spec", "dnsNames"))
        .isEqualTo(List.of("jakri-webhook.jakri.svc", "jakri-webhook.jakri.svc.cluster.local"));
    assertThat(get(certificate, "spec", "issuerRef"))
        .isEqualTo(
            Map.of("name", "cluster-ca", "kind", "ClusterIssuer", "group", "cert-manager.io"));
    assertThat(get(certificate, "spec", "secretName")).isEqualTo("jakri-webhook");
    assertThat(
            get(
                chart.one("ValidatingWebhookConfiguration", "jakri-webhook"),
                "metadata",
                "annotations",
                "cert-manager.io/inject-ca-from"))
        .isEqualTo("jakri/jakri-webhook");
    assertThat(strings(controller(chart).get("args")))
        .contains("--webhook-cert-dir=/etc/jakri/webhook");
    assertThatThrownBy(() -> render("webhookConfiguration.certManager.enabled=true"))
        .hasMessageContaining("needs webhookConfiguration.certManager.issuerRef.name");
    assertThatThrownBy(
            () ->
                render(
                    "webhookConfiguration.certManager.enabled=true",
                    "webhookConfiguration.certManager.issuerRef.name=x",
                    "webhookConfiguration.caBundle=Q0E="))
        .hasMessageContaining("set one or the other");
  }

  @Test
  void watchedNamespacesAloneAreChecked() {
    RenderedChart chart = RenderedChart.render("watch-namespaces.yaml");
    assertThat(
            get(
                chart.one("ValidatingWebhookConfiguration", "jakri-webhook"),
                "webhooks",
                0,
                "namespaceSelector",
                "matchExpressions",
                0))
        .isEqualTo(
            Map.of(
                "key", "kubernetes.io/metadata.name",
                "operator", "In",
                "values", List.of("team-a", "team-b")));
  }

  @Test
  void theFailurePolicyIsOneOfKubernetesTwo() {
    assertThat(
            get(
                render("webhookConfiguration.failurePolicy=Fail")
                    .one("ValidatingWebhookConfiguration", "jakri-webhook"),
                "webhooks",
                0,
                "failurePolicy"))
        .isEqualTo("Fail");
    assertThatThrownBy(() -> render("webhookConfiguration.failurePolicy=Sometimes"))
        .hasMessageContaining("webhookConfiguration/failurePolicy");
  }
}
