package io.jakri.charts;

import static io.jakri.charts.RenderedChart.get;
import static io.jakri.charts.RenderedChart.map;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.marcnuri.helm.Helm;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * What the {@code package} phase built ({@link ChartRepository}): the chart repository in {@code
 * target/repo} and the OCI layout in {@code target/oci}. Helm's cache and config go to {@code
 * target/helm-home} (environment set by failsafe in the module's pom).
 */
class ChartRepositoryIT {

  static final Path REPO = Path.of("target/repo");
  static final Path OCI = Path.of("target/oci");

  static Map<String, Object> chartYaml() throws IOException {
    return map(new Yaml().load(Files.readString(RenderedChart.CHART.resolve("Chart.yaml"))));
  }

  static Path tgz() throws IOException {
    Map<String, Object> chart = chartYaml();
    return REPO.resolve(chart.get("name") + "-" + chart.get("version") + ".tgz");
  }

  @Test
  void thePackagedChartRendersAndKeepsItsSchema() throws IOException {
    RenderedChart chart =
        RenderedChart.parse(
            Helm.template(tgz().toAbsolutePath().toString())
                .withName(RenderedChart.RELEASE)
                .withNamespace(RenderedChart.NAMESPACE)
                .set("handlers.simulated.enabled", "true")
                .call());

    assertThat(chart.one("DaemonSet", "jakri-agent")).isNotNull();
    assertThat(chart.one("Deployment", "jakri-controller")).isNotNull();
    assertThat(chart.one("Configuration", "simulated")).isNotNull();
    assertThat(chart.objects())
        .isEqualTo(
            RenderedChart.render(
                    RenderedChart.NAMESPACE,
                    List.of(),
                    List.of("handlers.simulated.enabled", "true"))
                .objects());
    assertThatThrownBy(
            () ->
                Helm.template(tgz().toAbsolutePath().toString())
                    .set("agent.udev.enabld", "true")
                    .call())
        .hasMessageContaining("at '/agent/udev'");
  }

  @Test
  void indexYamlListsTheArchiveWithItsDigest() throws IOException {
    Map<String, Object> index = map(new Yaml().load(Files.readString(REPO.resolve("index.yaml"))));
    Map<String, Object> chart = chartYaml();

    assertThat(index.get("apiVersion")).isEqualTo("v1");
    assertThat(index.get("generated")).isNotNull();
    List<Map<String, Object>> versions = RenderedChart.maps(get(index, "entries", "jakri"));
    assertThat(versions).hasSize(1);
    Map<String, Object> entry = versions.get(0);
    assertThat(entry.get("digest")).isEqualTo(ChartRepository.sha256(Files.readAllBytes(tgz())));
    assertThat(entry.get("urls")).isEqualTo(List.of(tgz().getFileName().toString()));
    assertThat(entry.get("created")).isNotNull();
    for (String field :
        List.of(
            "apiVersion",
            "name",
            "version",
            "appVersion",
            "description",
            "type",
            "keywords",
            "sources")) {
      assertThat(String.valueOf(entry.get(field)))
          .as(field)
          .isEqualTo(String.valueOf(chart.get(field)));
    }
  }

  @Test
  void theOciLayoutsDigestsAndSizesAreRight() throws IOException {
    assertThat(map(new Yaml().load(Files.readString(OCI.resolve("oci-layout")))))
        .isEqualTo(Map.of("imageLayoutVersion", "1.0.0"));
    Map<String, Object> index = map(new Yaml().load(Files.readString(OCI.resolve("index.json"))));
    assertThat(index.get("schemaVersion")).isEqualTo(2);
    List<Map<String, Object>> manifests = RenderedChart.maps(index.get("manifests"));
    assertThat(manifests).hasSize(1);
    Map<String, Object> descriptor = manifests.get(0);
    assertThat(descriptor.get("mediaType")).isEqualTo(ChartRepository.MANIFEST_MEDIA_TYPE);
    assertThat(get(descriptor, "annotations", "org.opencontainers.image.ref.name"))
        .isEqualTo(chartYaml().get("version"));

    byte[] manifestBytes = blob(descriptor);
    Map<String, Object> manifest =
        map(new Yaml().load(new String(manifestBytes, java.nio.charset.StandardCharsets.UTF_8)));
    assertThat(manifest.get("schemaVersion")).isEqualTo(2);
    assertThat(manifest.get("mediaType")).isEqualTo(ChartRepository.MANIFEST_MEDIA_TYPE);

    Map<String, Object> config = map(manifest.get("config"));
    assertThat(config.get("mediaType")).isEqualTo("application/vnd.cncf.helm.config.v1+json");
    Map<String, Object> metadata =
        map(new Yaml().load(new String(blob(config), java.nio.charset.StandardCharsets.UTF_8)));
    Map<String, Object> chart = chartYaml();
    for (String field :
        List.of("apiVersion", "name", "version", "appVersion", "description", "type")) {
      assertThat(String.valueOf(metadata.get(field)))
          .as(field)
          .isEqualTo(String.valueOf(chart.get(field)));
    }

    List<Map<String, Object>> layers = RenderedChart.maps(manifest.get("layers"));
    assertThat(layers).hasSize(1);
    assertThat(layers.get(0).get("mediaType"))
        .isEqualTo("application/vnd.cncf.helm.chart.content.v1.tar+gzip");
    assertThat(blob(layers.get(0))).isEqualTo(Files.readAllBytes(tgz()));
    assertThat(get(manifest, "annotations", "org.opencontainers.image.title")).isEqualTo("jakri");
    assertThat(get(manifest, "annotations", "org.opencontainers.image.version"))
        .isEqualTo(chart.get("version"));

    try (var blobs = Files.list(OCI.resolve("blobs/sha256"))) {
      assertThat(blobs.count()).as("blobs: manifest, config, chart").isEqualTo(3);
    }
  }

  /** A blob's content, after checking that its digest and size are the descriptor's. */
  private static byte[] blob(Map<String, Object> descriptor) throws IOException {
    String digest = (String) descriptor.get("digest");
    assertThat(digest).startsWith("sha256:");
    byte[] content = Files.readAllBytes(OCI.resolve("blobs/sha256").resolve(digest.substring(7)));
    assertThat(ChartRepository.sha256(content))
        .as("digest of " + digest)
        .isEqualTo(digest.substring(7));
    assertThat(((Number) descriptor.get("size")).longValue())
        .as("size of " + digest)
        .isEqualTo(content.length);
    return content;
  }

  /**
   * The repository served over HTTP (any static web host will do): {@code helm repo add} reads its
   * index.yaml, and the chart renders by its repository name, as {@code helm install jakri
   * jakri/jakri} would install it.
   */
  @Test
  void theRepositoryWorksFromAStaticWebServer(@TempDir Path helmConfig) throws IOException {
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext(
        "/charts/",
        exchange -> {
          Path file =
              REPO.resolve(exchange.getRequestURI().getPath().substring("/charts/".length()));
          if (Files.isRegularFile(file)) {
            byte[] body = Files.readAllBytes(file);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
              out.write(body);
            }
          } else {
            exchange.sendResponseHeaders(404, -1);
          }
          exchange.close();
        });
    server.start();
    try {
      Path repositories = helmConfig.resolve("repositories.yaml");
      URI url = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/charts/");
      Helm.repo().add().withRepositoryConfig(repositories).withName("jakri").withUrl(url).call();

      RenderedChart chart =
          RenderedChart.parse(
              Helm.template("jakri/jakri")
                  .withRepositoryConfig(repositories)
                  .withName(RenderedChart.RELEASE)
                  .withNamespace(RenderedChart.NAMESPACE)
                  .call());

      assertThat(chart.one("DaemonSet", "jakri-agent")).isNotNull();
      assertThat(chart.objects()).isEqualTo(RenderedChart.render().objects());
    } finally {
      server.stop(0);
    }
  }
}
