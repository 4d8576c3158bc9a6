package io.jakri.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.crd.InstanceNames;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.kubelet.emulator.PodAdmission;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A plugin author outside this repository who follows {@code handlers/README.md} alone: the guide's
 * install command, run in a copy of the checkout, installs exactly the four jakri artifacts a
 * plugin needs; the guide's sample project (its files taken verbatim from the README's section "A
 * plugin of your own, outside this repository"), built in a directory outside the reactor with the
 * guide's command, passes the testkit's contract, carries its own version and provider in its
 * manifest although its code is not in jakri's format; dropped into a running agent's plugins
 * directory, it becomes advertised resources whose container gets the plugin's property.
 *
 * <p>The nested builds run offline and never write to this build's local repository: they use a
 * settings file whose local repository is a private directory and whose only remote repository (a
 * mirror of everything) is this build's local repository as a {@code file://} URL, with {@code -o
 * -Daether.offline.protocols=file} so nothing else can be reached. So jakri's SNAPSHOTs land in the
 * private directory only, and the third-party artifacts (plugins, JUnit, PF4J) are copied from what
 * this build already resolved (the {@code it} POM fetches the install plugin, which a build that
 * stops at {@code verify} would not have).
 */
class ThirdPartyPluginIT {

  /** What a reader types; the test adds only the environment (settings, offline). */
  private static final String INSTALL = "mvn -q -pl handlers -am install -DskipTests";

  private static final String BUILD = "mvn -q verify";
  private static final String SECTION = "## A plugin of your own, outside this repository";
  private static final Pattern FILE =
      Pattern.compile("(?ms)^\\*\\*`([^`]+)`\\*\\*\\s*\\n+```[a-z]*\\n(.*?)^```\\s*$");
  private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(5);
  private static final Duration APPEAR = Duration.ofSeconds(30);
  private static final String NODE = HandlerAgent.NODE;
  private static final Set<String> NOT_COPIED = Set.of("target", ".git", "node_modules");

  @TempDir static Path work;

  private static Path userRepository;
  private static List<String> userJakriBefore;
  private static Path privateRepository;
  private static Path plugin;
  private static Path jar;

  @TempDir Path root;
  private HandlerAgent agent;

  @BeforeAll
  static void followTheGuide() throws Exception {
    Path checkout = Path.of(property("jakri.checkout")).toAbsolutePath().normalize();
    Path mvn = Path.of(property("jakri.maven.home"), "bin", "mvn");
    userRepository = Path.of(property("jakri.user.repository")).toAbsolutePath().normalize();
    assertThat(mvn).as("the Maven running this build").isExecutable();
    String guide = section(Files.readString(checkout.resolve("handlers/README.md")));
    assertThat(guide).contains(INSTALL).contains(BUILD);

    userJakriBefore = listing(userRepository.resolve("io/jakri"));
    privateRepository = work.resolve("repository");
    Path settings = writeSettings(work.resolve("settings.xml"));

    Path copy = work.resolve("jakri");
    copyCheckout(checkout, copy);
    run(mvn, settings, copy, INSTALL, work.resolve("install.log"));

    plugin = work.resolve("hello-handler");
    Map<String, String> files = files(guide);
    assertThat(files)
        .containsKeys(
            "pom.xml",
            "src/main/java/com/example/hello/HelloHandler.java",
            "src/test/java/com/example/hello/HelloPluginIT.java",
            "hello.yaml");
    for (Map.Entry<String, String> file : files.entrySet()) {
      Path target = plugin.resolve(file.getKey());
      Files.createDirectories(target.getParent());
      Files.writeString(target, file.getValue(), StandardCharsets.UTF_8);
    }
    run(mvn, settings, plugin, BUILD, work.resolve("build.log"));
    jar = plugin.resolve("target/hello-handler-1.0.0.jar");
    assertThat(jar).as("the guide's jar").isRegularFile();
  }

  @AfterEach
  void stopAgent() {
    if (agent != null) {
      agent.close();
    }
  }

  @Test
  void theInstallCommandInstallsTheFourArtifactsAPluginNeedsAndOnlyIntoTheGivenRepository()
      throws IOException {
    assertThat(listing(privateRepository.resolve("io/jakri")))
        .containsExactly(
            "jakri-handler-api/0.1.0-SNAPSHOT/jakri-handler-api-0.1.0-SNAPSHOT.jar",
            "jakri-handler-api/0.1.0-SNAPSHOT/jakri-handler-api-0.1.0-SNAPSHOT.pom",
            "jakri-handler-testkit/0.1.0-SNAPSHOT/jakri-handler-testkit-0.1.0-SNAPSHOT.jar",
            "jakri-handler-testkit/0.1.0-SNAPSHOT/jakri-handler-testkit-0.1.0-SNAPSHOT.pom",
            "jakri-handlers-parent/0.1.0-SNAPSHOT/jakri-handlers-parent-0.1.0-SNAPSHOT.pom",
            "jakri-parent/0.1.0-SNAPSHOT/jakri-parent-0.1.0-SNAPSHOT.pom");
    assertThat(listing(userRepository.resolve("io/jakri")))
        .as("this build's local repository")
        .isEqualTo(userJakriBefore);
  }

  @Test
  void theSamplePassesTheTestkitContractAndItsManifestCarriesItsOwnVersionAndProvider()
      throws IOException {
    String report =
        Files.readString(
            plugin.resolve("target/failsafe-reports/TEST-com.example.hello.HelloPluginIT.xml"));
    assertThat(report).contains("tests=\"4\"").contains("failures=\"0\"").contains("errors=\"0\"");
    try (JarFile file = new JarFile(jar.toFile())) {
      Attributes manifest = file.getManifest().getMainAttributes();
      assertThat(manifest.getValue("Plugin-Id")).isEqualTo("hello");
      assertThat(manifest.getValue("Plugin-Version")).isEqualTo("1.0.0");
      assertThat(manifest.getValue("Plugin-Provider")).isEqualTo("Example Corp");
      assertThat(manifest.getValue("Plugin-Requires")).isEqualTo(">=0.1.0");
      assertThat(file.getEntry("com/example/hello/HelloHandler.class")).isNotNull();
    }
    // Four-space indentation: google-java-format (jakri's check) would have failed the build.
    assertThat(
            Files.readString(plugin.resolve("src/main/java/com/example/hello/HelloHandler.java")))
        .contains("\n    @Override\n    public String name() {\n        return \"hello\";");
  }

  @Test
  void theJarDroppedIntoARunningAgentBecomesResourcesWhoseContainerGetsItsProperty()
      throws Exception {
    Path config = Files.createDirectories(root.resolve("config"));
    Path plugins = Files.createDirectories(root.resolve("plugins"));
    Files.copy(plugin.resolve("hello.yaml"), config.resolve("hello.yaml"));
    agent = HandlerAgent.start(root, plugins, Duration.ofSeconds(3));
    KubeletEmulator kubelet = agent.kubelet();

    // As the guide says for a running agent: copy to a temporary name, then rename into place.
    Path partial = plugins.resolve(".hello-handler.jar.partial");
    Files.copy(jar, partial);
    Files.move(partial, plugins.resolve("hello-handler.jar"), StandardCopyOption.ATOMIC_MOVE);

    String instance = InstanceNames.instanceName("hello-devices", "hello-0", false, NODE);
    String resource = "akri.sh/" + instance;
    String other = "akri.sh/" + InstanceNames.instanceName("hello-devices", "hello-1", false, NODE);
    await("the hello plugin's devices advertised")
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(50))
        .until(
            () ->
                kubelet.allocatable().getOrDefault(resource, -1L) == 1
                    && kubelet.allocatable().getOrDefault(other, -1L) == 1);

    PodAdmission pod = agent.admit(resource);
    String hash = HandlerAgent.hashSuffix(instance);
    assertThat(pod.container("c").envs())
        .containsEntry("HELLO_GREETING", "hi from a plugin")
        .containsEntry("HELLO_GREETING_" + hash, "hi from a plugin");
  }

  private static String property(String name) {
    String value = System.getProperty(name);
    assertThat(value).as("system property %s (set by the it pom)", name).isNotNull();
    return value;
  }

  /** The guide's out-of-tree section, up to the next section. */
  private static String section(String readme) {
    int start = readme.indexOf(SECTION);
    assertThat(start).as("handlers/README.md has the section %s", SECTION).isNotNegative();
    int end = readme.indexOf("\n## ", start + SECTION.length());
    return end < 0 ? readme.substring(start) : readme.substring(start, end);
  }

  /** The files of the section: a bold file name in backticks, then its fenced block. */
  private static Map<String, String> files(String section) {
    Map<String, String> files = new LinkedHashMap<>();
    Matcher m = FILE.matcher(section);
    while (m.find()) {
      files.put(m.group(1), m.group(2));
    }
    return files;
  }

  private static Path writeSettings(Path settings) throws IOException {
    String source = userRepository.toUri().toString();
    String policy =
        """
              <url>%s</url>
              <releases><checksumPolicy>ignore</checksumPolicy></releases>
              <snapshots><enabled>false</enabled></snapshots>
        """
            .formatted(source);
    String xml =
        """
        <settings>
          <localRepository>%s</localRepository>
          <mirrors>
            <mirror><id>this-build</id><mirrorOf>*</mirrorOf><url>%s</url></mirror>
          </mirrors>
          <profiles>
            <profile>
              <id>this-build</id>
              <repositories><repository><id>central</id>
        %s      </repository></repositories>
              <pluginRepositories><pluginRepository><id>central</id>
        %s      </pluginRepository></pluginRepositories>
            </profile>
          </profiles>
          <activeProfiles><activeProfile>this-build</activeProfile></activeProfiles>
        </settings>
        """
            .formatted(privateRepository, source, policy, policy);
    Files.writeString(settings, xml, StandardCharsets.UTF_8);
    return settings;
  }

  /** The checkout as a reader has it: sources only, no build output. */
  private static void copyCheckout(Path from, Path to) throws IOException {
    Files.walkFileTree(
        from,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
              throws IOException {
            if (!dir.equals(from) && NOT_COPIED.contains(dir.getFileName().toString())) {
              return FileVisitResult.SKIP_SUBTREE;
            }
            Files.createDirectories(to.resolve(from.relativize(dir).toString()));
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            if (attrs.isRegularFile()) {
              Files.copy(file, to.resolve(from.relativize(file).toString()));
            }
            return FileVisitResult.CONTINUE;
          }
        });
  }

  /** Runs a command of the guide in {@code dir}, with this test's environment appended. */
  private static void run(Path mvn, Path settings, Path dir, String command, Path log)
      throws IOException, InterruptedException {
    List<String> words = new ArrayList<>(List.of(command.split(" ")));
    assertThat(words.get(0)).isEqualTo("mvn");
    words.set(0, mvn.toString());
    words.addAll(List.of("-B", "-s", settings.toString(), "-o", "-Daether.offline.protocols=file"));
    Process process =
        new ProcessBuilder(words)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    boolean done = process.waitFor(BUILD_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    if (!done) {
      process.destroyForcibly().waitFor();
    }
    assertThat(done && process.exitValue() == 0)
        .as("`%s` in %s succeeds; its output:%n%s", command, dir, Files.readString(log))
        .isTrue();
  }

  /** Files under {@code dir}, relative and sorted; empty when it does not exist. */
  private static List<String> listing(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> files = Files.walk(dir)) {
      return files
          .filter(f -> f.toString().endsWith(".jar") || f.toString().endsWith(".pom"))
          .map(f -> dir.relativize(f).toString())
          .sorted()
          .toList();
    }
  }
}
