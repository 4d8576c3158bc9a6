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
 * The agent's packages depend on each other without a cycle (what {@code tools/package-graph.sh}
 * prints, held by the build): the JDK's jdeps reads the compiled main classes, and every package
 * that can reach itself through the graph is a cycle.
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
   * The layers at the bottom: {@code model} (the shared values) depends on no other package of the
   * agent, the Instance store only on {@code model}, and discovery on nothing that serves devices
   * (it writes Instances and hands changes to one sink; the root routes them).
   */
  @Test
  void theBottomLayersDependOnNothingAboveThem() {
    Map<String, Set<String>> graph = graph();
    String agent = "io.jakri.agent";
    assertThat(graph.getOrDefault(agent + ".model", Set.of())).as("model's dependencies").isEmpty();
    assertThat(graph.getOrDefault(agent + ".instance", Set.of()))
        .as("instance's dependencies")
        .isSubsetOf(agent + ".model");
    assertThat(graph.getOrDefault(agent + ".discovery", Set.of()))
        .as("discovery's dependencies")
        .isSubsetOf(agent + ".model", agent + ".instance", agent + ".configuration");
  }

  /** The agent's package graph from jdeps: package to the agent packages it depends on. */
  private static Map<String, Set<String>> graph() {
    Path classes = Path.of("target", "classes");
    assertThat(classes.resolve("io/jakri/agent")).isDirectory();
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
            classes.toString());
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
