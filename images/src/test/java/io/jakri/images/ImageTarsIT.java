package io.jakri.images;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.yaml.snakeyaml.Yaml;

/**
 * Opens the multi-platform OCI image tarballs built in {@code package} and checks what a runtime
 * will see on each architecture; runs the agent of each under qemu-user where it is installed.
 */
class ImageTarsIT {

  private static final Path IMAGES =
      Path.of(System.getProperty("jakri.images.dir", "target/images"));
  private static final String IMAGE_INDEX = "application/vnd.oci.image.index.v1+json";
  private static final String IMAGE_MANIFEST = "application/vnd.oci.image.manifest.v1+json";

  /** ELF e_machine values (EM_X86_64, EM_AARCH64) and qemu-user binaries by OCI architecture. */
  private static final Map<String, Integer> ELF_MACHINE = Map.of("amd64", 62, "arm64", 183);

  private static final Map<String, String> QEMU =
      Map.of("amd64", "qemu-x86_64-static", "arm64", "qemu-aarch64-static");

  /**
   * An OCI image layout tarball whose index.json names one image index: its ref name, the platforms
   * of that index in order, and the image of each architecture.
   */
  record OciIndex(
      String refName, List<Map<String, Object>> platforms, Map<String, OciImage> images) {

    static OciIndex open(String tarName) throws IOException {
      Path tar = IMAGES.resolve(tarName);
      assertThat(tar).as("image tarball").isRegularFile();
      Map<String, TarEntries.Entry> outer;
      try (InputStream in = Files.newInputStream(tar)) {
        outer = TarEntries.read(in);
      }
      assertThat(json(outer.get("oci-layout").content()))
          .containsEntry("imageLayoutVersion", "1.0.0");
      Map<String, Object> layout = json(outer.get("index.json").content());
      Map<String, Object> descriptor = single(list(layout.get("manifests")));
      assertThat(descriptor.get("mediaType")).isEqualTo(IMAGE_INDEX);
      String refName =
          (String) map(descriptor.get("annotations")).get("org.opencontainers.image.ref.name");
      Map<String, Object> index = json(blob(outer, descriptor));
      assertThat(index.get("mediaType")).isEqualTo(IMAGE_INDEX);
      List<Map<String, Object>> platforms = new ArrayList<>();
      Map<String, OciImage> images = new LinkedHashMap<>();
      for (Map<String, Object> manifest : list(index.get("manifests"))) {
        assertThat(manifest.get("mediaType")).isEqualTo(IMAGE_MANIFEST);
        Map<String, Object> platform = map(manifest.get("platform"));
        platforms.add(platform);
        images.put((String) platform.get("architecture"), OciImage.read(outer, manifest));
      }
      return new OciIndex(refName, platforms, images);
    }
  }

  /** One platform's image: its image config, and merged layer file tree. */
  record OciImage(Map<String, Object> imageConfig, Map<String, TarEntries.Entry> files) {

    static OciImage read(Map<String, TarEntries.Entry> outer, Map<String, Object> descriptor)
        throws IOException {
      Map<String, Object> manifest = json(blob(outer, descriptor));
      Map<String, Object> imageConfig = json(blob(outer, map(manifest.get("config"))));
      Map<String, TarEntries.Entry> files = new LinkedHashMap<>();
      for (Map<String, Object> layer : list(manifest.get("layers"))) {
        byte[] gz = blob(outer, layer);
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(gz))) {
          files.putAll(TarEntries.read(in));
        }
      }
      return new OciImage(imageConfig, files);
    }

    /** The runtime part of the image config (Entrypoint, Cmd, User, Env...). */
    Map<String, Object> config() {
      return map(imageConfig.get("config"));
    }

    int mode(String path) {
      assertThat(files).containsKey(path);
      return files.get(path).mode() & 0777;
    }

    /** Writes the regular files and directories (with their modes) under {@code root}. */
    void extractTo(Path root) throws IOException {
      for (TarEntries.Entry entry : files.values()) {
        Path path = root.resolve(entry.path());
        if (entry.type() == '5') {
          Files.createDirectories(path);
        } else if (entry.type() == '0' || entry.type() == 0) {
          Files.createDirectories(path.getParent());
          Files.write(path, entry.content());
          // As a container runtime unpacks it: class-data sharing checks the jars' mtimes.
          Files.setLastModifiedTime(path, FileTime.from(entry.mtime(), TimeUnit.SECONDS));
        } else {
          continue;
        }
        Files.setPosixFilePermissions(path, permissions(entry.mode() | 0700));
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"jakri-agent.tar", "jakri-controller.tar", "jakri-broker-template.tar"})
  void eachTarballIsOneImageIndexForLinuxAmd64AndArm64(String tarName) throws IOException {
    OciIndex index = OciIndex.open(tarName);

    assertThat(index.platforms())
        .containsExactly(
            Map.of("architecture", "amd64", "os", "linux"),
            Map.of("architecture", "arm64", "os", "linux"));
    index
        .images()
        .forEach(
            (arch, image) -> {
              assertThat(image.imageConfig())
                  .as("%s config of %s", arch, tarName)
                  .containsEntry("architecture", arch)
                  .containsEntry("os", "linux");
              assertThat(image.config()).isEqualTo(index.images().get("amd64").config());
            });
    assertThat(javaVersion(index.images().get("arm64")))
        .isEqualTo(javaVersion(index.images().get("amd64")))
        .startsWith("17.");
  }

  @ParameterizedTest
  @ValueSource(strings = {"jakri-agent.tar", "jakri-controller.tar", "jakri-broker-template.tar"})
  void everyElfFileIsBuiltForItsImagesArchitecture(String tarName) throws IOException {
    OciIndex index = OciIndex.open(tarName);

    index
        .images()
        .forEach(
            (arch, image) -> {
              Map<String, Integer> machines = new TreeMap<>();
              image.files().values().stream()
                  .filter(entry -> isElf(entry.content()))
                  .forEach(entry -> machines.put(entry.path(), elfMachine(entry.content())));
              assertThat(machines)
                  .as("ELF files of the %s image of %s", arch, tarName)
                  .containsKeys("opt/java/bin/java", "opt/java/lib/server/libjvm.so")
                  .allSatisfy(
                      (path, machine) ->
                          assertThat(machine).as(path).isEqualTo(ELF_MACHINE.get(arch)));
            });
  }

  /**
   * Runs the agent's and the controller's image entrypoint with {@code --version} on each
   * architecture with the image's own JRE and glibc: extracted from the image (file times kept, as
   * a container runtime unpacks it), under qemu-user with that root filesystem as its prefix and
   * the image's {@code /opt} mounted at {@code /opt}, so the entrypoint's paths are the image's.
   * The chart's default {@code javaToolOptions} are set. {@code -Xshare:on} makes the JVM stop
   * unless it maps the image's class-data archives (the JRE's and the application's AppCDS archive,
   * which name the exact JVM build, jar path, size and mtime). Under CI=true a missing qemu fails
   * the test; elsewhere it skips it.
   */
  @ParameterizedTest
  @CsvSource({"arm64,agent", "amd64,agent", "arm64,controller", "amd64,controller"})
  void entrypointRunsWithItsClassDataArchivesUnderQemu(
      String arch, String component, @TempDir Path root) throws IOException, InterruptedException {
    String qemu = QEMU.get(arch);
    Optional<Path> binary = onPath(qemu);
    if (binary.isEmpty()) {
      String reason = qemu + " is not on PATH (Debian package qemu-user-static)";
      if ("true".equals(System.getenv("CI"))) {
        fail("CI=true and " + reason + ": install it (.ci/run does)");
      }
      Assumptions.abort(reason);
    }
    OciImage image = OciIndex.open("jakri-" + component + ".tar").images().get(arch);
    image.extractTo(root);
    List<String> entrypoint = strings(image.config().get("Entrypoint"));
    // The image's /opt at /opt, in a mount namespace of the test's own (nothing outside the
    // temp dir is written): qemu's -L prefix serves the loader and libraries, but the JVM opens
    // the jar by the path the entrypoint gives it.
    List<String> command = new ArrayList<>();
    command.addAll(
        List.of(
            "unshare",
            "--mount",
            "--map-root-user",
            "sh",
            "-c",
            "mount --bind \"$0/opt\" /opt && exec \"$@\"",
            root.toString()));
    command.add(binary.get().toString());
    command.add("-L");
    command.add(root.toString());
    command.add(entrypoint.get(0));
    command.add("-Xshare:on");
    command.addAll(entrypoint.subList(1, entrypoint.size()));
    command.add("--version");

    // With the chart's default JVM options, as the pod runs it: a flag that made the archive
    // unusable would otherwise cost every start silently.
    Map<String, Object> values =
        json(Files.readAllBytes(Path.of("..", "charts", "jakri", "values.yaml")));
    String javaToolOptions = (String) map(values.get(component)).get("javaToolOptions");
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().put("JAVA_TOOL_OPTIONS", javaToolOptions);
    Process process = builder.start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

    assertThat(process.waitFor(5, TimeUnit.MINUTES)).as("exited").isTrue();
    assertThat(process.exitValue()).as(output).isZero();
    assertThat(output.strip())
        .isEqualTo(
            "Picked up JAVA_TOOL_OPTIONS: " + javaToolOptions + "\njakri-" + component + " 0.1.0");
  }

  @Test
  void agentImageRunsTheAgentAsRootWithTheBundledPlugins() throws IOException {
    OciIndex index = OciIndex.open("jakri-agent.tar");
    assertThat(index.refName()).isEqualTo("jakri/agent:0.1.0");
    assertThat(index.images()).hasSize(2);
    for (OciImage agent : index.images().values()) {
      assertThat(agent.config().get("Entrypoint"))
          .isEqualTo(
              List.of(
                  "/opt/java/bin/java",
                  "-XX:+ExitOnOutOfMemoryError",
                  "-XX:SharedArchiveFile=/opt/jakri/jakri-agent.jsa",
                  "-cp",
                  "/opt/jakri/jakri-agent.jar",
                  "io.jakri.agent.cli.Main"));
      assertThat(agent.config().get("Cmd")).isEqualTo(List.of("--plugins-dir=/opt/jakri/plugins"));
      assertThat(agent.config().get("User")).isEqualTo("0:0");
      assertThat(agent.files())
          .containsKeys(
              "opt/jakri/jakri-agent.jar",
              "opt/jakri/jakri-agent.jsa",
              "opt/jakri/plugins/jakri-handler-simulated.jar",
              "opt/jakri/plugins/jakri-handler-static.jar",
              "opt/jakri/plugins/jakri-handler-zeroconf.jar",
              "opt/jakri/plugins/jakri-handler-onvif.jar",
              "opt/jakri/plugins/jakri-handler-opcua.jar");
      assertRunnableJre(agent);
    }
  }

  @Test
  void controllerImageRunsAsNonRootWithTheHandlersTheWebhookChecksWith() throws IOException {
    OciIndex index = OciIndex.open("jakri-controller.tar");
    assertThat(index.refName()).isEqualTo("jakri/controller:0.1.0");
    assertThat(index.images()).hasSize(2);
    for (OciImage controller : index.images().values()) {
      assertThat(controller.config().get("Entrypoint"))
          .isEqualTo(
              List.of(
                  "/opt/java/bin/java",
                  "-XX:+ExitOnOutOfMemoryError",
                  "-XX:SharedArchiveFile=/opt/jakri/jakri-controller.jsa",
                  "-cp",
                  "/opt/jakri/jakri-controller.jar",
                  "io.jakri.controller.Main"));
      assertThat(controller.config().get("User")).isEqualTo("65532:65532");
      // The admission webhook runs each handler's check of discoveryDetails: plugins beside the
      // jar.
      assertThat(controller.files())
          .containsKeys(
              "opt/jakri/jakri-controller.jar",
              "opt/jakri/jakri-controller.jsa",
              "opt/jakri/plugins/jakri-handler-simulated.jar",
              "opt/jakri/plugins/jakri-handler-udev.jar",
              "opt/jakri/plugins/jakri-handler-opcua.jar");
      assertRunnableJre(controller);
    }
  }

  @Test
  void brokerTemplateImageRunsAsNonRootAndExposesItsPort() throws IOException {
    OciIndex index = OciIndex.open("jakri-broker-template.tar");
    assertThat(index.refName()).isEqualTo("jakri/broker-template:0.1.0");
    assertThat(index.images()).hasSize(2);
    for (OciImage broker : index.images().values()) {
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
  }

  @Test
  void chartDefaultsNameTheseImages() throws IOException {
    Map<String, Object> values =
        json(Files.readAllBytes(Path.of("..", "charts", "jakri", "values.yaml")));
    Map<String, Object> chart =
        json(Files.readAllBytes(Path.of("..", "charts", "jakri", "Chart.yaml")));
    String tag = (String) chart.get("appVersion");

    assertThat(map(map(values.get("agent")).get("image")).get("repository") + ":" + tag)
        .isEqualTo(OciIndex.open("jakri-agent.tar").refName());
    assertThat(map(map(values.get("controller")).get("image")).get("repository") + ":" + tag)
        .isEqualTo(OciIndex.open("jakri-controller.tar").refName());
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

  /** The blob a descriptor points at, checked against the descriptor's size and digest. */
  private static byte[] blob(Map<String, TarEntries.Entry> tar, Map<String, Object> descriptor) {
    String digest = (String) descriptor.get("digest");
    TarEntries.Entry entry = tar.get("blobs/" + digest.replace(':', '/'));
    assertThat(entry).as("blob %s", digest).isNotNull();
    assertThat(entry.content())
        .as("blob %s", digest)
        .hasSize(((Number) descriptor.get("size")).intValue());
    assertThat("sha256:" + sha256(entry.content())).isEqualTo(digest);
    return entry.content();
  }

  private static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }

  private static boolean isElf(byte[] content) {
    return content.length > 20
        && content[0] == 0x7f
        && content[1] == 'E'
        && content[2] == 'L'
        && content[3] == 'F';
  }

  /** e_machine: a little-endian 16-bit value at offset 18 of the ELF header. */
  private static int elfMachine(byte[] elf) {
    assertThat(elf[5]).as("ELFDATA2LSB").isEqualTo((byte) 1);
    return (elf[18] & 0xff) | (elf[19] & 0xff) << 8;
  }

  private static String javaVersion(OciImage image) {
    String release =
        new String(image.files().get("opt/java/release").content(), StandardCharsets.UTF_8);
    return release
        .lines()
        .filter(line -> line.startsWith("JAVA_VERSION="))
        .map(line -> line.substring("JAVA_VERSION=".length()).replace("\"", ""))
        .findFirst()
        .orElseThrow();
  }

  private static Optional<Path> onPath(String command) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      Path candidate = Path.of(dir.isEmpty() ? "." : dir, command);
      if (Files.isExecutable(candidate)) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
  }

  private static Set<PosixFilePermission> permissions(int mode) {
    StringBuilder rwx = new StringBuilder();
    for (int bit = 8; bit >= 0; bit--) {
      rwx.append((mode & 1 << bit) != 0 ? "rwx".charAt(2 - bit % 3) : '-');
    }
    return PosixFilePermissions.fromString(rwx.toString());
  }

  private static <T> T single(List<T> items) {
    assertThat(items).hasSize(1);
    return items.get(0);
  }

  private static Map<String, Object> json(byte[] bytes) {
    return map(new Yaml().load(new String(bytes, StandardCharsets.UTF_8)));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o) {
    return (Map<String, Object>) o;
  }

  @SuppressWarnings("unchecked")
  private static List<String> strings(Object o) {
    return (List<String>) o;
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> list(Object o) {
    return (List<Map<String, Object>>) o;
  }
}
