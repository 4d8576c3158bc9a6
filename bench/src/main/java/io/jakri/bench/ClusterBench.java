package io.jakri.bench;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import io.jakri.crd.InstanceNames;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.kubelet.v1beta1.AllocateRequest;
import io.jakri.kubelet.v1beta1.ContainerAllocateRequest;
import io.jakri.kubelet.v1beta1.DevicePluginGrpc;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * The cluster-mode figures (directory names are short: a Unix socket path has at most 107 bytes): a
 * fabric8 mock API server ({@link MockApiServer}) in its own JVM, the shipped agent jar in cluster
 * mode in JVMs of their own (each with its built-in kubelet emulator, {@code --emulate-kubelet}),
 * and this JVM as the kubelet-side client of the device-plugin sockets and as an API client of its
 * own. Not thread-safe: one scenario at a time.
 */
final class ClusterBench {

  private static final String NS = "default";
  private static final String FLOOR_AGENT = "jakri-bench-floor";
  private static final Duration READY = Duration.ofMinutes(2);

  private final Bench.Options options;
  private final Path work;
  private final List<String> agentJvm;
  private final BiConsumer<String, Double> add;

  ClusterBench(
      Bench.Options options, Path work, List<String> agentJvm, BiConsumer<String, Double> add) {
    this.options = options;
    this.work = work;
    this.agentJvm = agentJvm;
    this.add = add;
  }

  // ------------------------------------------------------------------ Allocate vs GET + PUT

  /**
   * One agent, K Instances of capacity C: Allocate of a fresh slot each time (so each claims one
   * slot: one PUT of the Instance), interleaved with the floor, a GET + PUT of the same Instance by
   * a fabric8 client in this JVM. Consecutive Allocates go to different Instances, so the floor's
   * write is long seen by the agent's watch when the agent next writes that Instance. The mock
   * server's trace splits each Allocate into before, in and after its API write.
   */
  void allocateRun(int run) throws Exception {
    Path root = Files.createDirectories(work.resolve("ca" + run));
    int warmup = options.quick() ? 200 : 300;
    int measured = options.quick() ? 200 : 300;
    int aloneRounds = measured / 2;
    int instances = 10;
    int capacity = (warmup + measured + aloneRounds + instances - 1) / instances;
    try (MockApi api = MockApi.start(options, root);
        KubernetesClient client = api.client(FLOOR_AGENT)) {
      String node = "bench-node";
      createNode(client, node);
      try (Node agentNode = startAgent(api, root, node, false)) {
        ChildJvm agent = agentNode.agent();
        apply(client, simulatedShared("alloc", instances, capacity));
        List<String> names = awaitInstances(client, "alloc", instances, 1);
        Path dir = root.resolve(node).resolve("dp");
        EventLoopGroup group = newGroup();
        Map<String, ManagedChannel> channels = new HashMap<>();
        try {
          Map<String, DevicePluginGrpc.DevicePluginBlockingStub> stubs = new HashMap<>();
          for (String name : names) {
            ManagedChannel channel = channel(group, awaitSocket(dir, name, agent));
            channels.put(name, channel);
            stubs.put(name, DevicePluginGrpc.newBlockingStub(channel));
          }
          List<Double> allocate = new ArrayList<>();
          List<Double> floor = new ArrayList<>();
          List<long[]> allocateWindows = new ArrayList<>();
          List<long[]> floorWindows = new ArrayList<>();
          long cpuAtStart = 0;
          long sysAtStart = 0;
          long threadsAtStart = 0;
          for (int i = 0; i < warmup + measured; i++) {
            if (i == warmup) {
              // jcmd first: the agent's CPU for answering it is not the Allocates'.
              threadsAtStart = agent.threadsStarted();
              cpuAtStart = agent.cpuMs();
              sysAtStart = agent.systemCpuMs();
            }
            String name = names.get(i % instances);
            String slot = InstanceNames.slotId(name, i / instances);
            AllocateRequest request =
                AllocateRequest.newBuilder()
                    .addContainerRequests(ContainerAllocateRequest.newBuilder().addDevicesIds(slot))
                    .build();
            long t0 = System.nanoTime();
            allocateWithRetry(stubs.get(name), request, i < instances);
            long t1 = System.nanoTime();
            Instance current =
                client.resources(Instance.class).inNamespace(NS).withName(name).get();
            current.getSpec().getDeviceUsage().put(slot, node);
            client.resource(current).update();
            long t2 = System.nanoTime();
            if (i >= warmup) {
              allocate.add((t1 - t0) / 1e6);
              floor.add((t2 - t1) / 1e6);
              allocateWindows.add(new long[] {t0, t1});
              floorWindows.add(new long[] {t1, t2});
            }
          }
          add.accept(
              "allocate_cluster_agent_cpu_per_allocate_ms",
              (agent.cpuMs() - cpuAtStart) / (double) measured);
          add.accept(
              "allocate_cluster_agent_kernel_cpu_per_allocate_ms",
              (agent.systemCpuMs() - sysAtStart) / (double) measured);
          add.accept(
              "allocate_cluster_agent_threads_started_per_allocate",
              (agent.threadsStarted() - threadsAtStart) / (double) measured);
          // The same Allocates without the floor's write in between (so no watch event of someone
          // else's write reaches the agent just before), paced like the interleaved ones.
          List<Double> alone = new ArrayList<>();
          long cpuAlone = agent.cpuMs();
          for (int i = warmup + measured; i < warmup + measured + aloneRounds; i++) {
            String name = names.get(i % instances);
            AllocateRequest request =
                AllocateRequest.newBuilder()
                    .addContainerRequests(
                        ContainerAllocateRequest.newBuilder()
                            .addDevicesIds(InstanceNames.slotId(name, i / instances)))
                    .build();
            long t0 = System.nanoTime();
            allocateWithRetry(stubs.get(name), request, false);
            alone.add((System.nanoTime() - t0) / 1e6);
            Thread.sleep(4);
          }
          add.accept("allocate_cluster_alone_p50_ms", Stats.percentile(alone, 50));
          add.accept(
              "allocate_cluster_alone_agent_cpu_per_allocate_ms",
              (agent.cpuMs() - cpuAlone) / (double) aloneRounds);
          add.accept("allocate_cluster_p50_ms", Stats.percentile(allocate, 50));
          add.accept("allocate_cluster_p99_ms", Stats.percentile(allocate, 99));
          add.accept("get_put_floor_p50_ms", Stats.percentile(floor, 50));
          add.accept("get_put_floor_p99_ms", Stats.percentile(floor, 99));
          breakdown(api.trace(), allocateWindows, floorWindows);
          Map<String, Long> counts = api.counts();
          long agentGets = counts.getOrDefault("get instances", 0L);
          add.accept("allocate_cluster_conflict_reads", (double) agentGets);
        } finally {
          channels.values().forEach(ManagedChannel::shutdownNow);
          group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
      }
    }
  }

  /**
   * From the mock server's trace: for each Allocate the agent's PUT inside its window (time before
   * the PUT reached the server, time in the server, time after), and for each floor its GET and
   * PUT.
   */
  private void breakdown(List<Trace> trace, List<long[]> allocates, List<long[]> floors) {
    List<Double> before = new ArrayList<>();
    List<Double> inServer = new ArrayList<>();
    List<Double> after = new ArrayList<>();
    for (long[] w : allocates) {
      // The agent claims with a resourceVersion-guarded JSON patch (a PUT for other changes).
      inWindow(trace, w, false, Set.of("patch instances", "update instances"))
          .ifPresent(
              t -> {
                before.add((t.start() - w[0]) / 1e6);
                inServer.add((t.end() - t.start()) / 1e6);
                after.add((w[1] - t.end()) / 1e6);
              });
    }
    List<Double> floorServer = new ArrayList<>();
    List<Double> floorClient = new ArrayList<>();
    for (long[] w : floors) {
      Optional<Trace> get = inWindow(trace, w, true, Set.of("get instances"));
      Optional<Trace> put = inWindow(trace, w, true, Set.of("update instances"));
      if (get.isPresent() && put.isPresent()) {
        double server = (get.get().end() - get.get().start() + put.get().end() - put.get().start());
        floorServer.add(server / 1e6);
        floorClient.add((w[1] - w[0] - server) / 1e6);
      }
    }
    add.accept("allocate_cluster_before_put_p50_ms", Stats.percentile(before, 50));
    add.accept("allocate_cluster_put_in_server_p50_ms", Stats.percentile(inServer, 50));
    add.accept("allocate_cluster_after_put_p50_ms", Stats.percentile(after, 50));
    add.accept("get_put_floor_in_server_p50_ms", Stats.percentile(floorServer, 50));
    add.accept("get_put_floor_outside_server_p50_ms", Stats.percentile(floorClient, 50));
  }

  private static Optional<Trace> inWindow(
      List<Trace> trace, long[] window, boolean fromBench, Set<String> kinds) {
    return trace.stream()
        .filter(t -> kinds.contains(t.kind()) && t.agent().startsWith(FLOOR_AGENT) == fromBench)
        .filter(t -> t.start() >= window[0] && t.end() <= window[1])
        .findFirst();
  }

  /** The first Allocates may race the agent's start; retry those for a while. */
  private static void allocateWithRetry(
      DevicePluginGrpc.DevicePluginBlockingStub stub, AllocateRequest request, boolean retry)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try {
        stub.withDeadlineAfter(10, TimeUnit.SECONDS).allocate(request);
        return;
      } catch (io.grpc.StatusRuntimeException e) {
        if (!retry || System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(50);
      }
    }
  }

  // ------------------------------------------------------------------ API requests per event

  /**
   * Ten agents (nodes w0..w9) share 100 Instances (simulated, shared, the same 100 device ids on
   * every node). Counts the API requests the mock server serves, by verb and resource: until every
   * Instance lists all ten nodes and the counts are steady (per discovered device), then for 100
   * Allocates spread over the nodes (per Allocate), then over 10 idle seconds (a hot loop would
   * show there).
   */
  void writesRun(int agents, int devices) throws Exception {
    Path root = Files.createDirectories(work.resolve("cw"));
    try (MockApi api = MockApi.start(options, root);
        KubernetesClient client = api.client(FLOOR_AGENT)) {
      List<String> nodes = new ArrayList<>();
      List<Node> jvms = new ArrayList<>();
      try {
        for (int i = 0; i < agents; i++) {
          createNode(client, "w" + i);
          nodes.add("w" + i);
          jvms.add(startAgent(api, root, "w" + i, true));
        }
        // Every agent has listed and watches Configurations and Instances.
        awaitCount(api, "watch instances", agents);
        awaitCount(api, "watch configurations", agents);
        Map<String, Long> idle = steady(api);
        long t0 = System.nanoTime();
        apply(client, simulatedShared("shared", devices, 1));
        List<String> names = awaitInstances(client, "shared", devices, agents);
        Map<String, Long> discovered = steady(api);
        add.accept("cluster_writes_discovery_s", (System.nanoTime() - t0) / 1e9);
        Map<String, Long> perDevice = delta(idle, discovered);
        long writes = writes(perDevice);
        System.out.printf(
            "  API requests for %d devices seen by %d nodes: %s%n", devices, agents, perDevice);
        add.accept("api_writes_per_device", writes / (double) devices);
        add.accept("api_writes_per_device_per_node", writes / (double) devices / agents);
        add.accept("api_requests_per_device", total(perDevice) / (double) devices);
        long instanceWrites =
            perDevice.getOrDefault("create instances", 0L)
                + perDevice.getOrDefault("update instances", 0L)
                + perDevice.getOrDefault("patch instances", 0L);
        add.accept(
            "api_instance_writes_per_device_per_node", instanceWrites / (double) devices / agents);
        add.accept(
            "api_configuration_status_writes_per_device",
            perDevice.getOrDefault("patch configurations/status", 0L) / (double) devices);

        EventLoopGroup group = newGroup();
        List<ManagedChannel> channels = new ArrayList<>();
        try {
          List<DevicePluginGrpc.DevicePluginBlockingStub> stubs = new ArrayList<>();
          for (int k = 0; k < names.size(); k++) {
            int node = k % agents;
            Path dir = root.resolve(nodes.get(node)).resolve("dp");
            ManagedChannel channel =
                channel(group, awaitSocket(dir, names.get(k), jvms.get(node).agent()));
            channels.add(channel);
            stubs.add(DevicePluginGrpc.newBlockingStub(channel));
          }
          Map<String, Long> beforeAllocates = steady(api);
          for (int k = 0; k < names.size(); k++) {
            AllocateRequest request =
                AllocateRequest.newBuilder()
                    .addContainerRequests(
                        ContainerAllocateRequest.newBuilder()
                            .addDevicesIds(InstanceNames.slotId(names.get(k), 0)))
                    .build();
            allocateWithRetry(stubs.get(k), request, true);
          }
          Map<String, Long> allocated = steady(api);
          Map<String, Long> perAllocate = delta(beforeAllocates, allocated);
          System.out.printf(
              "  API requests for %d Allocates over %d nodes: %s%n",
              names.size(), agents, perAllocate);
          add.accept("api_requests_per_allocate", total(perAllocate) / (double) names.size());
          add.accept("api_writes_per_allocate", writes(perAllocate) / (double) names.size());
          Thread.sleep(10_000);
          Map<String, Long> quiet = delta(allocated, api.counts());
          System.out.printf("  API requests in 10 idle seconds: %s%n", quiet);
          add.accept("api_requests_idle_10s", (double) total(quiet));
          // The agents' designed periodic work: one GET of its Node per agent per minute (sweep).
          long sweep = quiet.getOrDefault("get nodes", 0L);
          add.accept("api_requests_idle_10s_besides_node_sweep", (double) total(quiet) - sweep);
        } finally {
          channels.forEach(ManagedChannel::shutdownNow);
          group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
      } finally {
        for (Node jvm : jvms) {
          jvm.close();
        }
      }
    }
  }

  /**
   * Fair queues: one cluster-mode agent; a small Configuration (one simulated device) is applied
   * while a big one ({@code bigDevices} devices) is still being written and registered, and its
   * time from apply to advertised (its class resource in the kubelet emulator's capacity) is
   * measured. The floor is the same small Configuration applied to the same idle agent first, in
   * the same run. Also reports how many of the big one's Instances were written by then.
   */
  void fairRun(int run, int bigDevices) throws Exception {
    Path root = Files.createDirectories(work.resolve("cf" + run));
    try (MockApi api = MockApi.start(options, root);
        KubernetesClient client = api.client(FLOOR_AGENT)) {
      createNode(client, "f0");
      try (Node node = startAgent(api, root, "f0", true)) {
        awaitCount(api, "watch instances", 1);
        awaitCount(api, "watch configurations", 1);
        double alone = advertise(client, node, "small-alone");
        apply(client, simulatedCount("big", bigDevices));
        long deadline = System.nanoTime() + READY.toNanos();
        while (countInstances(client, "big") == 0) {
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException("no Instance of the big Configuration appeared");
          }
          Thread.sleep(20);
        }
        double beside = advertise(client, node, "small-beside");
        long written = countInstances(client, "big");
        System.out.printf(
            "  small Configuration advertised in %.0f ms alone, %.0f ms beside a %d-device one"
                + " (%d of its Instances written then)%n",
            alone, beside, bigDevices, written);
        add.accept("fair_small_alone_advertise_ms", alone);
        add.accept("fair_small_beside_big_advertise_ms", beside);
        add.accept("fair_big_instances_written_when_small_advertised", (double) written);
      }
    }
  }

  /** Applies a one-device Configuration and waits until its class resource is advertised. */
  private static double advertise(KubernetesClient client, Node node, String name)
      throws Exception {
    String resource = "akri.sh/" + name;
    long t0 = System.nanoTime();
    apply(client, simulatedCount(name, 1));
    long deadline = t0 + READY.toNanos();
    while (node.emulator().capacity().getOrDefault(resource, 0L) < 1) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(resource + " was not advertised");
      }
      Thread.sleep(2);
    }
    return (System.nanoTime() - t0) / 1e6;
  }

  private static long countInstances(KubernetesClient client, String configuration) {
    return client.resources(Instance.class).inNamespace(NS).list().getItems().stream()
        .filter(i -> configuration.equals(i.getSpec().getConfigurationName()))
        .count();
  }

  static String simulatedCount(String name, int devices) {
    return "apiVersion: akri.sh/v0\nkind: Configuration\nmetadata:\n  name: "
        + name
        + "\nspec:\n  capacity: 1\n  discoveryHandler:\n    name: simulated\n"
        + "    discoveryDetails: |\n      count: "
        + devices
        + "\n";
  }

  /** Counts (bench's own requests left out) once they have not changed for 2 s. */
  private static Map<String, Long> steady(MockApi api) throws Exception {
    Map<String, Long> last = api.counts();
    long deadline = System.nanoTime() + READY.toNanos();
    while (System.nanoTime() < deadline) {
      Thread.sleep(2000);
      Map<String, Long> now = api.counts();
      if (now.equals(last)) {
        return now;
      }
      last = now;
    }
    throw new IllegalStateException("API requests never settled: " + last);
  }

  private static void awaitCount(MockApi api, String kind, long at) throws Exception {
    long deadline = System.nanoTime() + READY.toNanos();
    while (api.counts().getOrDefault(kind, 0L) < at) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("fewer than " + at + " " + kind + ": " + api.counts());
      }
      Thread.sleep(100);
    }
  }

  private static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
    Map<String, Long> d = new TreeMap<>();
    after.forEach(
        (k, v) -> {
          long n = v - before.getOrDefault(k, 0L);
          if (n != 0) {
            d.put(k, n);
          }
        });
    return d;
  }

  private static long writes(Map<String, Long> counts) {
    return counts.entrySet().stream()
        .filter(
            e ->
                e.getKey().startsWith("create")
                    || e.getKey().startsWith("update")
                    || e.getKey().startsWith("patch")
                    || e.getKey().startsWith("delete"))
        .mapToLong(Map.Entry::getValue)
        .sum();
  }

  private static long total(Map<String, Long> counts) {
    return counts.values().stream().mapToLong(Long::longValue).sum();
  }

  // ------------------------------------------------------------------ helpers

  /**
   * Starts the kubelet emulator of {@code node} in this JVM (checkpoint writing off, as in the
   * standalone figures, so that the agent's JVM does agent work only) and the agent against it.
   */
  private Node startAgent(MockApi api, Path root, String node, boolean quiet) throws IOException {
    Path dir = Files.createDirectories(root.resolve(node));
    @SuppressWarnings("deprecation")
    EventLoopGroup group = new EpollEventLoopGroup(2);
    KubeletEmulator emulator = FootprintBench.emulator(dir, group);
    List<String> args =
        List.of(
            "-jar",
            options.agentJar().toString(),
            "--node-name",
            node,
            "--namespace",
            NS,
            "--device-plugin-dir",
            dir.resolve("dp").toString(),
            "--pod-resources-socket",
            dir.resolve("pr").resolve("kubelet.sock").toString(),
            "--plugins-dir",
            options.plugins().toString());
    Map<String, String> env = new LinkedHashMap<>(options.agentEnv());
    env.put("KUBECONFIG", api.kubeconfig.toString());
    if (quiet) {
      env.put("JAKRI_LOG_LEVEL", "WARN");
    }
    return new Node(ChildJvm.start(agentJvm, env, args, dir.resolve("agent.log")), emulator, group);
  }

  /** One node: the agent's JVM and the kubelet emulator it registers with. */
  record Node(ChildJvm agent, KubeletEmulator emulator, EventLoopGroup group)
      implements AutoCloseable {
    @Override
    public void close() throws InterruptedException {
      try {
        agent.close();
      } finally {
        emulator.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      }
    }
  }

  /**
   * The Node object a real cluster would have: Ready (the controller schedules brokers on Ready
   * nodes) with a capacity (the agent tidies its own keys there).
   */
  static void createNode(KubernetesClient client, String name) {
    client
        .nodes()
        .resource(
            new io.fabric8.kubernetes.api.model.NodeBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewStatus()
                .addToCapacity("cpu", new io.fabric8.kubernetes.api.model.Quantity("2"))
                .addNewCondition()
                .withType("Ready")
                .withStatus("True")
                .withLastTransitionTime(java.time.Instant.now().toString())
                .endCondition()
                .endStatus()
                .build())
        .create();
  }

  static String simulatedShared(String name, int devices, int capacity) {
    StringBuilder yaml =
        new StringBuilder("apiVersion: akri.sh/v0\nkind: Configuration\nmetadata:\n  name: ")
            .append(name)
            .append("\nspec:\n  capacity: ")
            .append(capacity)
            .append("\n  discoveryHandler:\n    name: simulated\n    discoveryDetails: |\n")
            .append("      shared: true\n      descriptions:\n");
    for (int i = 0; i < devices; i++) {
      yaml.append("        - d").append(i).append('\n');
    }
    return yaml.toString();
  }

  private static void apply(KubernetesClient client, String yaml) {
    Configuration c = client.getKubernetesSerialization().unmarshal(yaml, Configuration.class);
    client.resources(Configuration.class).inNamespace(NS).resource(c).create();
  }

  /** Waits until the Configuration has {@code count} Instances each listing {@code nodes} nodes. */
  private static List<String> awaitInstances(
      KubernetesClient client, String configuration, int count, int nodes) throws Exception {
    long deadline = System.nanoTime() + READY.toNanos();
    while (true) {
      List<Instance> all = client.resources(Instance.class).inNamespace(NS).list().getItems();
      List<String> names =
          all.stream()
              .filter(i -> configuration.equals(i.getSpec().getConfigurationName()))
              .filter(i -> i.getSpec().getNodes().size() >= nodes)
              .map(i -> i.getMetadata().getName())
              .sorted()
              .toList();
      if (names.size() >= count) {
        return names;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "only " + names.size() + " of " + count + " Instances on " + nodes + " nodes");
      }
      Thread.sleep(200);
    }
  }

  static Path awaitSocket(Path dir, String instance, ChildJvm agent) throws Exception {
    long deadline = System.nanoTime() + READY.toNanos();
    while (System.nanoTime() < deadline) {
      if (Files.isDirectory(dir)) {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, instance + "-*.sock")) {
          for (Path p : files) {
            if (p.getFileName().toString().matches(instance + "-\\d+\\.sock")) {
              return p;
            }
          }
        }
      }
      if (!agent.alive()) {
        throw new IllegalStateException("agent exited; see " + agent.log());
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException("no socket for " + instance + " in " + dir);
  }

  @SuppressWarnings("deprecation")
  private static EventLoopGroup newGroup() {
    return new EpollEventLoopGroup(1);
  }

  static ManagedChannel channel(EventLoopGroup group, Path socket) {
    return NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
        .channelType(EpollDomainSocketChannel.class)
        .eventLoopGroup(group)
        .usePlaintext()
        .build();
  }

  /** One line of the mock server's trace. */
  record Trace(String agent, String kind, long start, long end) {}

  /** The mock API server's JVM and how to reach it. */
  static final class MockApi implements AutoCloseable {
    final ChildJvm jvm;
    final String url;
    final Path kubeconfig;
    private final HttpClient http = HttpClient.newHttpClient();

    private MockApi(ChildJvm jvm, String url, Path kubeconfig) {
      this.jvm = jvm;
      this.url = url;
      this.kubeconfig = kubeconfig;
    }

    static MockApi start(Bench.Options options, Path root) throws Exception {
      Path log = root.resolve("mock-api.log");
      Path benchJar = options.benchClasspath();
      String cp =
          benchJar + ":" + options.agentJar() + ":" + benchJar.getParent().resolve("lib") + "/*";
      ChildJvm jvm =
          ChildJvm.start(
              List.of("-XX:+UseSerialGC", "-Xmx512m"),
              List.of("-cp", cp, MockApiServer.class.getName()),
              log);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (System.nanoTime() < deadline) {
        for (String line : Files.readAllLines(log)) {
          if (line.startsWith("MOCK_API_URL ")) {
            String url = line.substring("MOCK_API_URL ".length()).strip();
            Path kubeconfig = root.resolve("kubeconfig");
            Files.writeString(kubeconfig, MockApiServer.kubeconfig(url));
            return new MockApi(jvm, url, kubeconfig);
          }
        }
        if (!jvm.alive()) {
          break;
        }
        Thread.sleep(100);
      }
      jvm.close();
      throw new IllegalStateException("mock API server did not start: " + Files.readString(log));
    }

    KubernetesClient client(String userAgent) {
      Config config =
          new ConfigBuilder(Config.empty())
              .withMasterUrl(url)
              .withNamespace(NS)
              .withUserAgent(userAgent)
              .build();
      return new KubernetesClientBuilder().withConfig(config).build();
    }

    /** Requests served so far by kind ({@code <verb> <resource>}), the bench's own left out. */
    Map<String, Long> counts() throws Exception {
      Map<String, Long> counts = new TreeMap<>();
      for (String line : get("/bench/counts").split("\n")) {
        int space = line.lastIndexOf(' ');
        if (space > 0) {
          counts.put(line.substring(0, space), Long.parseLong(line.substring(space + 1)));
        }
      }
      // The bench's own requests (listing Instances, the floor) are counted separately.
      counts.keySet().removeIf(k -> k.startsWith("bench:"));
      return counts;
    }

    List<Trace> trace() throws Exception {
      List<Trace> trace = new ArrayList<>();
      for (String line : get("/bench/trace").split("\n")) {
        String[] f = line.split(" ");
        if (f.length == 5) {
          trace.add(new Trace(f[0], f[1] + " " + f[2], Long.parseLong(f[3]), Long.parseLong(f[4])));
        }
      }
      return trace;
    }

    private String get(String path) throws Exception {
      return http.send(
              HttpRequest.newBuilder(URI.create(url + path)).build(),
              HttpResponse.BodyHandlers.ofString())
          .body();
    }

    @Override
    public void close() throws Exception {
      jvm.close();
    }
  }
}
