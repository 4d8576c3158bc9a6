package io.jakri.charts;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.jakri.testing.kube.RealApiServer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/** Helpers for the tests that send the rendered chart to a real API server. */
final class ChartOnServer {

  static final Path CRDS = RenderedChart.CHART.resolve("crds");

  private ChartOnServer() {}

  /**
   * Creates the chart's CRDs ({@code jakri/crds}) for real unless they exist, and waits until the
   * API server serves them (condition Established), so Configurations and Instances validate.
   */
  static void ensureCrds(RealApiServer api) throws IOException {
    KubernetesClient admin = api.admin();
    List<Path> files;
    try (Stream<Path> listed = Files.list(CRDS)) {
      files = listed.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
    }
    for (Path file : files) {
      CustomResourceDefinition crd;
      try (InputStream in = Files.newInputStream(file)) {
        crd = admin.apiextensions().v1().customResourceDefinitions().load(in).item();
      }
      String name = crd.getMetadata().getName();
      if (admin.apiextensions().v1().customResourceDefinitions().withName(name).get() == null) {
        admin.apiextensions().v1().customResourceDefinitions().resource(crd).create();
      }
      await("CRD " + name + " Established")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> established(admin, name));
    }
  }

  private static boolean established(KubernetesClient admin, String name) {
    CustomResourceDefinition crd =
        admin.apiextensions().v1().customResourceDefinitions().withName(name).get();
    return crd != null
        && crd.getStatus() != null
        && crd.getStatus().getConditions().stream()
            .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  /** A rendered object as fabric8 sends it: every field Helm rendered, none dropped or added. */
  static GenericKubernetesResource generic(KubernetesClient client, Map<String, Object> object) {
    return client
        .getKubernetesSerialization()
        .convertValue(object, GenericKubernetesResource.class);
  }

  /** "Kind namespace/name" of a rendered object, for messages. */
  static String describe(Map<String, Object> object) {
    Object namespace = RenderedChart.get(object, "metadata", "namespace");
    return object.get("kind")
        + " "
        + (namespace == null ? "" : namespace + "/")
        + RenderedChart.get(object, "metadata", "name");
  }

  /** "Kind namespace/name" of an object, for messages. */
  static String describe(HasMetadata object) {
    String namespace = object.getMetadata().getNamespace();
    return object.getKind()
        + " "
        + (namespace == null ? "" : namespace + "/")
        + object.getMetadata().getName();
  }

  /** The group of an apiVersion ("" for the core group's "v1"). */
  static String group(Object apiVersion) {
    String text = String.valueOf(apiVersion);
    int slash = text.indexOf('/');
    return slash < 0 ? "" : text.substring(0, slash);
  }
}
