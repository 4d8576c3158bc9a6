package io.jakri.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * The agent's packages depend on each other without a cycle and only downwards through its layers
 * (what {@code tools/package-graph.sh} prints, held by the build): the JDK's jdeps reads the
 * compiled main classes, and every package that can reach itself through the graph is a cycle.
 */
class PackageCyclesTest {

  @Test
  void theAgentsPackagesHaveNoCycle() {
    Map<String, Set<String>> graph = graph();
    Set<String> inCycles = new TreeSet<>();
    for (String start : graph.keySet()) {
      if (reaches(graph, start, start)) {
        inCycles.add(start);
      }
    }
    assertThat(inCycles).as("packages on a dependency cycle").isEmpty();
  }

  /**
   * The agent's layers, bottom first: each package imports only packages on lower layers. The
   * shared values at the bottom; then what is parsed and stored; discovery, CDI and the kubelet
   * side, which know nothing of each other; what serves and writes through them; the mode; the
   * composition root; the tools and the command line on top.
   */
  static final List<List<String>> LAYERS =
      List.of(
          List.of("model"),
          List.of("configuration", "instance"),
          List.of("discovery", "cdi", "deviceplugin"),
          List.of("external", "allocation", "cluster"),
          List.of("reclaim", "dra", "events"),
          List.of("metrics"),
          List.of("controlplane"),
          List.of(""),
          List.of("demo", "validate"),
          List.of("cli"));

  @Test
  void everyImportGoesToALowerLayer() {
    Map<String, Integer> layer = new HashMap<>();
    for (int i = 0; i < LAYERS.size(); i++) {
      for (String name : LAYERS.get(i)) {
        layer.put(name.isEmpty() ? "io.jakri.agent" : "io.jakri.agent." + name, i);
      }
    }
    Map<String, Set<String>> graph = graph();
    Set<String> packages = new TreeSet<>(graph.keySet());
    graph.values().forEach(packages::addAll);
    assertThat(packages).as("packages without a layer").allMatch(layer::containsKey);
    List<String> upOrAcross = new ArrayList<>();
    graph.forEach(
        (from, tos) ->
            tos.stream()
                .filter(to -> layer.get(to) >= layer.get(from))
                .forEach(to -> upOrAcross.add(from + " -> " + to)));
    assertThat(upOrAcross).as("imports of a package on the same or a higher layer").isEmpty();
  }

  /**
   * The tools and the command line (the top two layers) live in this module, the binary; what the
   * agent runs lives in the core module, which holds none of them.
   */
  @Test
  void theCoreHoldsNoToolAndNoCommandLine() {
    Path core = Path.of("core", "target", "classes", "io", "jakri", "agent");
    assertThat(core).isDirectory();
    for (String tool : List.of("demo", "validate", "cli")) {
      assertThat(core.resolve(tool)).as("core classes of %s", tool).doesNotExist();
      assertThat(Path.of("target", "classes", "io", "jakri", "agent", tool)).isDirectory();
    }
  }

  /** The agent's package graph from jdeps: package to the agent packages it depends on. */
  private static Map<String, Set<String>> graph() {
    Path classes = Path.of("target", "classes");
    Path core = Path.of("core", "target", "classes");
    assertThat(classes.resolve("io/jakri/agent")).isDirectory();
    assertThat(core.resolve("io/jakri/agent")).isDirectory();
    ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        jdeps.run(
            new PrintWriter(out),
            new PrintWriter(err),
            "-verbose:package",
            "-filter:none",
            "-e",
            "io\\.jakri\\.agent(\\..*)?",
            classes.toString(),
            core.toString());
    assertThat(code).as("jdeps: %s", err).isZero();
    Map<String, Set<String>> graph = new HashMap<>();
    for (String line : out.toString().split("\n")) {
      String[] f = line.trim().split("\\s+");
      if (f.length >= 3
          && f[1].equals("->")
          && f[0].startsWith("io.jakri.agent")
          && f[2].startsWith("io.jakri.agent")
          && !f[0].equals(f[2])) {
        graph.computeIfAbsent(f[0], k -> new HashSet<>()).add(f[2]);
      }
    }
    assertThat(graph).as("edges read from jdeps").isNotEmpty();
    return graph;
  }

  /** Whether {@code to} can be reached from {@code from} in one or more steps. */
  private static boolean reaches(Map<String, Set<String>> graph, String from, String to) {
    Set<String> seen = new HashSet<>();
    List<String> todo = new ArrayList<>(graph.getOrDefault(from, Set.of()));
    while (!todo.isEmpty()) {
      String next = todo.remove(todo.size() - 1);
      if (next.equals(to)) {
        return true;
      }
      if (seen.add(next)) {
        todo.addAll(graph.getOrDefault(next, Set.of()));
      }
    }
    return false;
  }
}
