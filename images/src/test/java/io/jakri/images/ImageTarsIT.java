package io.jakri.images;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/** Opens the OCI image tarballs Jib wrote in {@code package} and checks what a runtime will see. */
class ImageTarsIT {

  private static final Path IMAGES =
      Path.of(System.getProperty("jakri.images.dir", "target/images"));

  /** An OCI image layout tarball: its ref name, image config, and merged layer file tree. */
  record OciImage(String refName, Map<String, Object> config, Map<String, TarEntries.Entry> files) {

    static OciImage open(String tarName) throws IOException {
      Path tar = IMAGES.resolve(tarName);
      assertThat(tar).as("image tarball").isRegularFile();
      Map<String, TarEntries.Entry> outer;
      try (InputStream in = Files.newInputStream(tar)) {
        outer = TarEntries.read(in);
      }
      Map<String, Object> index = json(outer.get("index.json").content());
      Map<String, Object> descriptor = list(index.get("manifests")).get(0);
      String refName =
          (String) map(descriptor.get("annotations")).get("org.opencontainers.image.ref.name");
      Map<String, Object> manifest = json(blob(outer, (String) descriptor.get("digest")));
      Map<String, Object> config =
          json(blob(outer, (String) map(manifest.get("config")).get("digest")));
      Map<String, TarEntries.Entry> files = new LinkedHashMap<>();
      for (Map<String, Object> layer : list(manifest.get("layers"))) {
        byte[] gz = blob(outer, (String) layer.get("digest"));
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(gz))) {
          files.putAll(TarEntries.read(in));
        }
      }
      return new OciImage(refName, map(config.get("config")), files);
    }

    int mode(String path) {
      assertThat(files).as("files of %s", refName).containsKey(path);
      return files.get(path).mode() & 0777;
    }
  }

  @Test
  void agentImageRunsTheAgentAsRootWithTheBundledPlugins() throws IOException {
    OciImage agent = OciImage.open("jakri-agent.tar");

    assertThat(agent.refName()).isEqualTo("jakri/agent:0.1.0");
    assertThat(agent.config().get("Entrypoint"))
        .isEqualTo(
            List.of(
                "/opt/java/bin/java",
                "-XX:+ExitOnOutOfMemoryError",
                "-cp",
                "/opt/jakri/jakri-agent.jar",
                "io.jakri.agent.cli.Main"));
    assertThat(agent.config().get("Cmd")).isEqualTo(List.of("--plugins-dir=/opt/jakri/plugins"));
    assertThat(agent.config().get("User")).isEqualTo("0:0");
    assertThat(agent.files())
        .containsKeys(
            "opt/jakri/jakri-agent.jar",
            "opt/jakri/plugins/jakri-handler-simulated.jar",
            "opt/jakri/plugins/jakri-handler-static.jar",
            "opt/jakri/plugins/jakri-handler-zeroconf.jar",
            "opt/jakri/plugins/jakri-handler-onvif.jar",
            "opt/jakri/plugins/jakri-handler-opcua.jar");
    assertRunnableJre(agent);
  }

  @Test
  void controllerImageRunsAsNonRoot() throws IOException {
    OciImage controller = OciImage.open("jakri-controller.tar");

    assertThat(controller.refName()).isEqualTo("jakri/controller:0.1.0");
    assertThat(controller.config().get("Entrypoint"))
        .isEqualTo(
            List.of(
                "/opt/java/bin/java",
                "-XX:+ExitOnOutOfMemoryError",
                "-cp",
                "/opt/jakri/jakri-controller.jar",
                "io.jakri.controller.Main"));
    assertThat(controller.config().get("User")).isEqualTo("65532:65532");
    assertThat(controller.files()).containsKey("opt/jakri/jakri-controller.jar");
    assertRunnableJre(controller);
  }

  @Test
  void brokerTemplateImageRunsAsNonRootAndExposesItsPort() throws IOException {
    OciImage broker = OciImage.open("jakri-broker-template.tar");

    assertThat(broker.refName()).isEqualTo("jakri/broker-template:0.1.0");
    assertThat(broker.config().get("Entrypoint"))
        .isEqualTo(
            List.of(
                "/opt/java/bin/java",
                "-XX:+ExitOnOutOfMemoryError",
                "-cp",
                "/opt/jakri/jakri-broker-template.jar",
                "io.jakri.broker.Broker"));
    assertThat(broker.config().get("User")).isEqualTo("65532:65532");
    assertThat(map(broker.config().get("ExposedPorts"))).containsOnlyKeys("8080/tcp");
    assertThat(broker.files()).containsKey("opt/jakri/jakri-broker-template.jar");
    assertRunnableJre(broker);
  }

  @Test
  void chartDefaultsNameTheseImages() throws IOException {
    Map<String, Object> values =
        json(Files.readAllBytes(Path.of("..", "charts", "jakri", "values.yaml")));
    Map<String, Object> chart =
        json(Files.readAllBytes(Path.of("..", "charts", "jakri", "Chart.yaml")));
    String tag = (String) chart.get("appVersion");

    assertThat(map(map(values.get("agent")).get("image")).get("repository") + ":" + tag)
        .isEqualTo(OciImage.open("jakri-agent.tar").refName());
    assertThat(map(map(values.get("controller")).get("image")).get("repository") + ":" + tag)
        .isEqualTo(OciImage.open("jakri-controller.tar").refName());
  }

  /** The JRE, the dynamic loader and a non-root passwd entry are in place and executable. */
  private static void assertRunnableJre(OciImage image) {
    assertThat(image.mode("opt/java/bin/java")).isEqualTo(0755);
    assertThat(image.mode("opt/java/lib/jspawnhelper")).isEqualTo(0755);
    assertThat(image.files().keySet())
        .filteredOn(p -> p.matches("lib(64)?/ld-linux-[^/]+\\.so\\.\\d"))
        .singleElement()
        .satisfies(loader -> assertThat(image.mode(loader)).isEqualTo(0755));
    assertThat(image.files().keySet())
        .anyMatch(p -> p.matches("lib/[^/]+-linux-gnu/libc\\.so\\.6"))
        .anyMatch(p -> p.matches("lib/[^/]+-linux-gnu/libdl\\.so\\.2"));
    assertThat(new String(image.files().get("etc/passwd").content(), StandardCharsets.UTF_8))
        .contains("nonroot:x:65532:65532:");
    assertThat(image.config().get("Env")).asList().contains("JAVA_HOME=/opt/java");
  }

  private static byte[] blob(Map<String, TarEntries.Entry> tar, String digest) {
    TarEntries.Entry entry = tar.get("blobs/" + digest.replace(':', '/'));
    assertThat(entry).as("blob %s", digest).isNotNull();
    return entry.content();
  }

  private static Map<String, Object> json(byte[] bytes) {
    return map(new Yaml().load(new String(bytes, StandardCharsets.UTF_8)));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o) {
    return (Map<String, Object>) o;
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> list(Object o) {
    return (List<Map<String, Object>>) o;
  }
}
