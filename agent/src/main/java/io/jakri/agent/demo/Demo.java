package io.jakri.agent.demo;

import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.agent.EmulatedKubelet;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceListing;
import io.jakri.agent.instance.StoreException;
import io.jakri.kubelet.emulator.AdmissionException;
import io.jakri.kubelet.emulator.ContainerAllocation;
import io.jakri.kubelet.emulator.EmulatorListener;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.kubelet.emulator.Pod;
import io.jakri.kubelet.emulator.PodAdmission;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import sun.misc.Signal;

/**
 * The {@code demo} command: a standalone agent with the kubelet emulator and the bundled example
 * Configurations. Prints what a cluster operator would see (sockets, Instances, node capacity and
 * allocatable) and what a pod receives ({@code env | sort}), then follows changes until Ctrl-C.
 */
public final class Demo {

  /** The demo's node name, as in the Spookd seed's walkthrough. */
  public static final String DEFAULT_NODE = "minikube";

  private static final Duration SETTLE = Duration.ofSeconds(30);

  private final AgentOptions options;
  private final boolean once;
  private final PrintWriter out;
  private final SamplePods samples;

  /** A demo of the bundled examples' sample pods. */
  public Demo(AgentOptions options, boolean once, PrintWriter out) {
    this(options, once, out, SamplePods.bundled());
  }

  /**
   * @param samples which pods to admit once everything is advertised
   */
  public Demo(AgentOptions options, boolean once, PrintWriter out, SamplePods samples) {
    this.options = options;
    this.once = once;
    this.out = out;
    this.samples = samples;
  }

  /** Copies the bundled example Configurations into {@code dir} and returns it. */
  public static Path writeBundledExamples(Path dir) throws IOException {
    Files.createDirectories(dir);
    for (String name : resource("index.txt").lines().map(String::strip).toList()) {
      if (!name.isEmpty()) {
        Files.writeString(dir.resolve(name), resource(name), StandardCharsets.UTF_8);
      }
    }
    return dir;
  }

  private static String resource(String name) throws IOException {
    try (InputStream in = Demo.class.getResourceAsStream("/demo/" + name)) {
      if (in == null) {
        throw new IOException("bundled demo file " + name + " is missing from the agent jar");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** Runs the demo; returns the process exit code. */
  public int run() throws Exception {
    CountDownLatch stop = new CountDownLatch(1);
    if (!once) {
      Signal.handle(new Signal("INT"), s -> stop.countDown());
      Signal.handle(new Signal("TERM"), s -> stop.countDown());
    }
    out.println("jakri demo: standalone agent + kubelet emulator on node " + options.nodeName());
    out.println(
        "  (no cluster: every view below is computed by this demo; each heading names the command"
            + " that shows the same on a real cluster)");
    out.println("  configurations: " + options.config().orElseThrow());
    out.println("  device plugins: " + options.devicePluginDir());
    out.println("  handler plugins: " + options.pluginsDir());
    try (Agent agent = Agent.start(options)) {
      KubeletEmulator kubelet = EmulatedKubelet.of(agent).orElseThrow();
      Semaphore changes = new Semaphore(0);
      kubelet.addListener(
          new EmulatorListener() {
            @Override
            public void registered(String resource, String endpoint) {
              changes.release();
            }

            @Override
            public void snapshot(String resource, Map<String, String> devices) {
              changes.release();
            }
          });
      if (!settle(agent, kubelet, changes)) {
        out.println();
        out.println(
            "Not everything was registered within " + SETTLE.toSeconds() + " s; see the log.");
      }
      report(agent, kubelet);
      admitSamples(agent, kubelet);
      if (once) {
        return 0;
      }
      out.println();
      out.println(
          "Following changes (edit the files in "
              + options.config().orElseThrow()
              + " to see them); Ctrl-C to stop.");
      Map<String, Long> shown = new TreeMap<>(kubelet.capacity());
      Map<String, Long> shownAllocatable = new TreeMap<>(kubelet.allocatable());
      while (stop.getCount() > 0) {
        if (!changes.tryAcquire(500, TimeUnit.MILLISECONDS)) {
          continue;
        }
        changes.drainPermits();
        Map<String, Long> capacity = new TreeMap<>(kubelet.capacity());
        Map<String, Long> allocatable = new TreeMap<>(kubelet.allocatable());
        if (!capacity.equals(shown) || !allocatable.equals(shownAllocatable)) {
          printChanges(shown, capacity, shownAllocatable, allocatable);
          shown = capacity;
          shownAllocatable = allocatable;
        }
      }
      out.println("stopping");
    }
    return 0;
  }

  /** Waits until every resource the agent serves is registered and has reported its devices. */
  private boolean settle(Agent agent, KubeletEmulator kubelet, Semaphore changes)
      throws InterruptedException {
    Instant deadline = Instant.now().plus(SETTLE);
    int stableRounds = 0;
    while (Instant.now().isBefore(deadline)) {
      Set<String> served = agent.devicePlugins().served();
      boolean ready =
          !served.isEmpty()
              && agent.devicePlugins().allRegistered()
              && kubelet.registeredResources().containsAll(served)
              && served.stream().allMatch(r -> kubelet.capacity().getOrDefault(r, 0L) > 0);
      // Discovery reports asynchronously: count as settled when nothing changed for a moment.
      if (ready && !changes.tryAcquire(300, TimeUnit.MILLISECONDS)) {
        if (++stableRounds >= 2) {
          return true;
        }
      } else {
        stableRounds = 0;
        changes.tryAcquire(100, TimeUnit.MILLISECONDS);
      }
      changes.drainPermits();
    }
    return false;
  }

  private void report(Agent agent, KubeletEmulator kubelet) throws StoreException {
    out.println();
    out.println(
        "Device-plugin sockets in "
            + options.devicePluginDir()
            + " (the emulated kubelet's directory; `ls` it to see the same):");
    try (Stream<Path> files = Files.list(options.devicePluginDir())) {
      files.map(p -> p.getFileName().toString()).sorted().forEach(f -> out.println(f));
    } catch (IOException e) {
      out.println("(cannot list: " + e.getMessage() + ")");
    }
    out.println();
    out.println(INSTANCES_HEADING);
    List<Instance> instances = new ArrayList<>(agent.instances().list());
    instances.sort(Comparator.comparing(Instance::name));
    int width = instances.stream().mapToInt(i -> i.name().length()).max().orElse(4) + 3;
    int cwidth =
        instances.stream().mapToInt(i -> i.configurationName().length()).max().orElse(6) + 3;
    out.println(pad("NAME", width) + pad("CONFIG", cwidth) + pad("SHARED", 8) + "NODES");
    for (Instance i : instances) {
      out.println(
          pad(i.name(), width)
              + pad(i.configurationName(), cwidth)
              + pad(Boolean.toString(i.shared()), 8)
              + i.nodes());
    }
    out.println();
    out.println(INSTANCES_YAML_HEADING);
    out.print(InstanceListing.yaml(instances));
    out.println();
    out.println(nodeHeading("capacity"));
    out.println(json(kubelet.capacity()));
    out.println(nodeHeading("allocatable"));
    out.println(json(kubelet.allocatable()));
    for (String line : CAPACITY_EXPLAINED) {
      out.println(line);
    }
  }

  /** The heading of the Instances table. */
  static final String INSTANCES_HEADING =
      "Instances (as `kubectl get akrii` would list them on a cluster):";

  /** The heading of the Instances' YAML. */
  static final String INSTANCES_YAML_HEADING =
      "The same Instances in full (as `kubectl get akrii -o yaml` would print them):";

  /** What the capacity and allocatable numbers mean, printed under them. */
  static final List<String> CAPACITY_EXPLAINED =
      List.of(
          "  capacity: the devices the agent advertises per resource; each is one slot (an Instance"
              + " has spec.capacity slots),",
          "    and a class resource (akri.sh/<configuration> or a handler's class) offers its"
              + " Instances' slots again.",
          "  allocatable: of those, the ones advertised healthy. As on a real node, a slot a pod"
              + " holds stays in the allocatable",
          "    of the resource the pod asked for (the scheduler subtracts pods' requests); the"
              + " other resources offering that",
          "    slot report it unhealthy, so their allocatable drops.");

  /** The heading of the node's capacity or allocatable ({@code what}, its first word the field). */
  String nodeHeading(String what) {
    String field = what.split(" ", 2)[0];
    return "Node "
        + options.nodeName()
        + "'s "
        + what
        + " (as `kubectl get node "
        + options.nodeName()
        + " -o jsonpath='{.status."
        + field
        + "}'` would show it):";
  }

  private void admitSamples(Agent agent, KubeletEmulator kubelet) {
    Map<String, Long> capacity = kubelet.capacity();
    Set<String> served = agent.devicePlugins().served();
    Map<String, Set<String>> devices = new TreeMap<>();
    for (String resource : served) {
      devices.put(resource, Set.copyOf(kubelet.devices(resource).keySet()));
    }
    List<Pod> pods = samples.pods(capacity, served, devices);
    for (Pod pod : pods) {
      out.println();
      out.println(podHeading(pod));
      try {
        PodAdmission admitted = kubelet.admit(pod);
        for (Map.Entry<String, ContainerAllocation> c : admitted.containers().entrySet()) {
          new TreeMap<>(c.getValue().envs()).forEach((k, v) -> out.println(k + "=" + v));
          c.getValue()
              .devices()
              .forEach(
                  d -> out.println("# device node " + d.hostPath() + " -> " + d.containerPath()));
        }
      } catch (AdmissionException e) {
        out.println("pod " + pod.name() + " not admitted: " + e.getMessage());
      }
    }
    out.println();
    out.println(nodeHeading("allocatable after these pods"));
    out.println(json(kubelet.allocatable()));
  }

  /** The heading of what a sample pod received. */
  static String podHeading(Pod pod) {
    String asks =
        pod.containers().stream()
            .flatMap(c -> new TreeMap<>(c.requests()).entrySet().stream())
            .map(e -> e.getValue() + " of " + e.getKey())
            .collect(Collectors.joining(", "));
    return "Pod "
        + pod.name()
        + " asking for "
        + asks
        + ", admitted by the emulated kubelet: its device env (as `kubectl exec "
        + pod.name()
        + " -- env | sort` would show it):";
  }

  private void printChanges(
      Map<String, Long> before,
      Map<String, Long> after,
      Map<String, Long> allocBefore,
      Map<String, Long> allocAfter) {
    Set<String> keys = new java.util.TreeSet<>(before.keySet());
    keys.addAll(after.keySet());
    keys.addAll(allocAfter.keySet());
    for (String key : keys) {
      Long c0 = before.get(key);
      Long c1 = after.get(key);
      Long a0 = allocBefore.get(key);
      Long a1 = allocAfter.get(key);
      if (!java.util.Objects.equals(c0, c1) || !java.util.Objects.equals(a0, a1)) {
        out.printf(
            "%s %s capacity %s -> %s, allocatable %s -> %s%n",
            Instant.now().toString().substring(11, 19),
            key,
            c0 == null ? "-" : c0,
            c1 == null ? "-" : c1,
            a0 == null ? "-" : a0,
            a1 == null ? "-" : a1);
      }
    }
  }

  private static String json(Map<String, Long> values) {
    Map<String, Long> sorted = new TreeMap<>(values);
    if (sorted.isEmpty()) {
      return "{}";
    }
    return sorted.entrySet().stream()
        .map(e -> "\"" + e.getKey() + "\": \"" + e.getValue() + "\"")
        .collect(Collectors.joining(",\n", "{\n", "\n}"));
  }

  private static String pad(String s, int width) {
    return s.length() >= width ? s + " " : s + " ".repeat(width - s.length());
  }
}
