package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.Agent;
import io.jakri.agent.PluginJars;
import io.jakri.agent.TestAgent;
import io.jakri.agent.discovery.PluginHandlerRegistry.LoadProblem;
import io.jakri.agent.testplugins.MisbehavingHandlers;
import io.jakri.crd.InstanceNames;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile plugin jars are refused with a reason naming the problem, nothing escapes the plugins
 * directory, no agent or API class is replaced, and the genuine handlers keep working.
 */
class PluginJarIT {

  private static final String SIM = "example.com/sim";

  @TempDir Path tmp;

  @Test
  void hostilePluginJarsAreRefusedWithAReason() throws Exception {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    Path fakes = compileFakes(tmp.resolve("fakes"));
    Map<String, byte[]> flapping = extension(MisbehavingHandlers.Flapping.class);

    Map<String, byte[]> traversal = new LinkedHashMap<>(flapping);
    traversal.put("../../escaped.txt", "x".getBytes(StandardCharsets.UTF_8));
    jar(plugins.resolve("traversal.jar"), "traversal", ">=0.1.0", traversal);
    Map<String, byte[]> absolute = new LinkedHashMap<>(flapping);
    absolute.put(tmp.resolve("abs-escaped.txt").toString(), new byte[] {1});
    jar(plugins.resolve("absolute.jar"), "absolute", ">=0.1.0", absolute);
    Map<String, byte[]> backslash = new LinkedHashMap<>(flapping);
    backslash.put("..\\..\\win-escaped.txt", new byte[] {1});
    jar(plugins.resolve("backslash.jar"), "backslash", ">=0.1.0", backslash);
    jar(plugins.resolve("bad-id.jar"), "../../evil", ">=0.1.0", flapping);

    Map<String, byte[]> shadowAgent = new LinkedHashMap<>(flapping);
    shadowAgent.put(
        "io/jakri/agent/Agent.class",
        Files.readAllBytes(fakes.resolve("io/jakri/agent/Agent.class")));
    jar(plugins.resolve("shadow-agent.jar"), "shadow-agent", ">=0.1.0", shadowAgent);
    Map<String, byte[]> shadowApi = new LinkedHashMap<>(flapping);
    shadowApi.put(
        "io/jakri/handler/DiscoveredDevice.class",
        Files.readAllBytes(fakes.resolve("io/jakri/handler/DiscoveredDevice.class")));
    jar(plugins.resolve("shadow-api.jar"), "shadow-api", ">=0.1.0", shadowApi);
    jar(plugins.resolve("too-new.jar"), "too-new", ">=99.0.0", flapping);

    Map<String, String> expected = new LinkedHashMap<>();
    expected.put("traversal.jar", "escape");
    expected.put("absolute.jar", "escape");
    expected.put("backslash.jar", "escape");
    expected.put("bad-id.jar", "Plugin-Id");
    expected.put("shadow-agent.jar", "io.jakri.agent");
    expected.put("shadow-api.jar", "handler API");
    expected.put("too-new.jar", "99.0.0");

    try (FaultAgent a = FaultAgent.start(tmp.resolve("agent"), plugins, Duration.ofSeconds(60))) {
      a.writeConfig(
          "sim", TestAgent.configuration("sim", "simulated", 1, "count: 2\nresourceName: " + SIM));
      a.awaitAllocatable(SIM, 2, Duration.ofSeconds(20));
      List<LoadProblem> problems = a.agent.pluginProblems();
      for (Map.Entry<String, String> e : expected.entrySet()) {
        assertThat(problems)
            .as(e.getKey())
            .filteredOn(p -> p.jar().getFileName().toString().equals(e.getKey()))
            .isNotEmpty()
            .allSatisfy(p -> assertThat(p.reason()).contains(e.getValue()));
      }
      assertThat(a.agent.handlers().find("flapping"))
          .as("no refused jar provides a handler")
          .isEmpty();
      assertThat(Agent.VERSION).isEqualTo("0.1.0");
      try (var walk = Files.walk(tmp)) {
        assertThat(walk.map(p -> p.getFileName().toString())).noneMatch(n -> n.contains("escaped"));
      }

      // A jar dropped in later that claims an existing handler's name is refused for that name;
      // the handler loaded first keeps serving its Configuration.
      Path hijack = tmp.resolve("aaa-hijack.jar");
      jar(hijack, "hijack", ">=0.1.0", extension(MisbehavingHandlers.Impostor.class));
      Files.move(hijack, plugins.resolve("aaa-hijack.jar"), StandardCopyOption.ATOMIC_MOVE);
      await()
          .atMost(Duration.ofSeconds(15))
          .untilAsserted(
              () ->
                  assertThat(a.agent.pluginProblems())
                      .anySatisfy(
                          p -> {
                            assertThat(p.jar().getFileName().toString())
                                .isEqualTo("aaa-hijack.jar");
                            assertThat(p.reason()).contains("\"simulated\"", "already provided");
                          }));
      String impostor = "akri.sh/" + InstanceNames.instanceName("sim", "impostor", true, "node-a");
      // The impostor's devices never show up, for as long as a discovery round takes.
      await()
          .pollDelay(Duration.ZERO)
          .during(Duration.ofSeconds(2))
          .atMost(Duration.ofSeconds(3))
          .until(() -> !a.kubelet().capacity().containsKey(impostor));
      assertThat(a.allocatable(SIM)).isEqualTo(2);
      int cases = expected.size() + 1;
      System.out.printf("FAULT plugin-jars cases=%d recovered=%d lost=0%n", cases, cases);
    }
  }

  private static Map<String, byte[]> extension(Class<?> handler) throws IOException {
    Path jar = Files.createTempFile("ext", ".jar");
    try {
      PluginJars.plugin(jar, "x", "", List.of(handler));
      Map<String, byte[]> entries = new LinkedHashMap<>();
      try (JarFile file = new JarFile(jar.toFile())) {
        for (ZipEntry e : java.util.Collections.list(file.entries())) {
          if (!e.getName().startsWith("META-INF/MANIFEST")) {
            entries.put(e.getName(), file.getInputStream(e).readAllBytes());
          }
        }
      }
      return entries;
    } finally {
      Files.delete(jar);
    }
  }

  private static void jar(Path jar, String id, String requires, Map<String, byte[]> entries)
      throws IOException {
    PluginJars.jar(
        jar,
        Map.of("Plugin-Id", id, "Plugin-Version", "0.1.0", "Plugin-Requires", requires),
        entries);
  }

  /** Compiles look-alikes of an agent class and an API class (never put on any class path). */
  private static Path compileFakes(Path dir) throws IOException {
    Path src = Files.createDirectories(dir.resolve("src"));
    Path agent = src.resolve("Agent.java");
    Files.writeString(
        agent,
        "package io.jakri.agent; public final class Agent {"
            + " public static final String VERSION = \"pwned\"; }");
    Path device = src.resolve("DiscoveredDevice.java");
    Files.writeString(device, "package io.jakri.handler; public final class DiscoveredDevice { }");
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    int rc =
        javac.run(
            null,
            null,
            null,
            "-proc:none",
            "-d",
            dir.toString(),
            agent.toString(),
            device.toString());
    assertThat(rc).isZero();
    return dir;
  }
}
