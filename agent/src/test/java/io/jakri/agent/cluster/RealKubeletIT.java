package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.StreamObserver;
import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.agent.deviceplugin.AllocateOutcome;
import io.jakri.agent.deviceplugin.DevicePluginReport;
import io.jakri.agent.events.AgentReport;
import io.jakri.agent.external.ExternalHandlers;
import io.jakri.agent.reclaim.DeviceInUse;
import io.jakri.agent.reclaim.GrpcPodResourcesClient;
import io.jakri.crd.Crds;
import io.jakri.crd.Instance;
import io.jakri.crd.InstanceNames;
import io.jakri.testing.kube.FreePorts;
import io.jakri.testing.kube.KubeBinaries;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import v0.Discovery;
import v0.DiscoveryHandlerGrpc;
import v0.RegistrationGrpc;

/**
 * The device-plugin path against a real kubelet 1.26.4 and containerd (started by {@code
 * shared/k8s/start-kubelet.sh} in a private mount namespace under {@code target/rk}) and the shared
 * real API server ({@link RealKube}): the agent in cluster mode, in this JVM, authenticated as the
 * {@code jakri-agent} ServiceAccount bound only by {@code agent/rbac/agent-rbac.yaml}. Its device
 * comes from an Akri-protocol discovery handler served by the test (neither {@code static} nor
 * {@code simulated} can give a mount): env properties, a read-only mount of a directory of the
 * test's and the host's {@code /dev/null} as {@code /dev/jakri-null}. Pods are real busybox
 * containers; what they got is read from their logs. Started once for the class; the steps build on
 * each other, in order. Root only (skipped otherwise, failed under CI=true).
 */
@ExtendWith(RealKube.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RealKubeletIT {

  static final Path K8S_TARGET = Path.of("target").toAbsolutePath();
  static final String NODE = "jakri-real-kubelet";
  static final String HANDLER = "jakri-real";
  static final String CONFIG = "real-dev";
  static final String DEVICE_ID = "real-device-0";
  static final String GREETING = "hello-from-the-handler";
  static final String MOUNTED = "mounted-from-the-handler";
  static final String CLASS_RESOURCE = "akri.sh/" + CONFIG;
  static final String INSTANCE = InstanceNames.instanceName(CONFIG, DEVICE_ID, false, NODE);
  static final String INSTANCE_RESOURCE = "akri.sh/" + INSTANCE;
  static final Duration RECLAIM_GRACE = Duration.ofSeconds(2);
  static final ObjectMapper JSON = new ObjectMapper();
  static final Path HOST_KUBELET_DIR = Path.of("/var/lib/kubelet");
  static final Path HOST_POD_LOGS = Path.of("/var/log/pods");
  static final Path HOST_CONTAINERD_RUN = Path.of("/run/containerd");

  RealApiServer api;
  KubernetesClient admin;
  String ns;
  Path root;
  Path kubeletBinary;
  Path startScript;
  Path imageTar;
  Path kubeconfig;
  Process kubelet;
  Agent agent;
  Server handler;
  EventLoopGroup loop;
  ExecutorService executor;
  final List<StreamObserver<Discovery.DiscoverResponse>> discoverStreams =
      new CopyOnWriteArrayList<>();
  final List<AgentReport> events = new CopyOnWriteArrayList<>();
  final List<String> createdMountPoints = new ArrayList<>();
  final Map<String, Pod> pods = new java.util.concurrent.ConcurrentHashMap<>();
  long registerMs;

  @BeforeAll
  void startEverything(RealApiServer server) throws Exception {
    if (!"root".equals(System.getProperty("user.name"))) {
      RealKube.unavailable("RealKubeletIT runs containerd and the kubelet: needs root");
    }
    KubeBinaries.Result found = RealKube.binaries();
    if (found.binaries().isEmpty() || found.binaries().get().kubelet().isEmpty()) {
      RealKube.unavailable("no kubelet binary: " + found.missing().reason());
    }
    for (String tool : List.of("containerd", "runc", "ctr", "unshare", "apt-get", "dpkg-deb")) {
      if (KubeBinaries.onPath(tool).isEmpty()) {
        RealKube.unavailable(
            tool + " missing: apt-get install containerd runc containernetworking-plugins");
      }
    }
    if (!Files.isExecutable(Path.of("/usr/lib/cni/loopback"))) {
      RealKube.unavailable(
          "/usr/lib/cni/loopback missing: apt-get install containernetworking-plugins");
    }
    api = server;
    admin = server.admin();
    kubeletBinary = found.binaries().get().kubelet().get();
    Path k8s = found.binaries().get().k8sDir();
    startScript = k8s.resolve("start-kubelet.sh");

    // ROOT: short (device-plugin socket paths must fit 108 bytes), wiped from a previous run.
    root = K8S_TARGET.resolve("rk");
    deleteTree(root);
    Files.createDirectories(root);
    imageTar = busyboxImage(k8s);
    writeNodeFiles(k8s);
    kubeconfig = api.kubeconfig(api.adminConfig(), root.resolve("kubeconfig"));
    for (Path p : List.of(HOST_KUBELET_DIR, HOST_POD_LOGS, HOST_CONTAINERD_RUN)) {
      if (!Files.exists(p)) {
        createdMountPoints.add(p.toString());
      }
    }
    startKubelet();
    await("node Ready")
        .atMost(Duration.ofSeconds(180))
        .pollInterval(Duration.ofMillis(500))
        .until(this::nodeReady);

    // The project's CRDs and the agent's RBAC, as an operator installs them.
    for (CustomResourceDefinition crd : Crds.load()) {
      admin.resource(crd).createOr(existing -> existing.update());
    }
    api.apply(Files.readString(Path.of("rbac", "agent-rbac.yaml")));
    ns = api.namespace("realkubelet");

    // The Akri-protocol handler giving the device, then the agent that registers it.
    Path akri = Files.createDirectories(root.resolve("akri"));
    Path share = Files.createDirectories(root.resolve("share"));
    Files.writeString(share.resolve("hello.txt"), MOUNTED + "\n");
    loop = new EpollEventLoopGroup(2);
    executor = Executors.newCachedThreadPool();
    Path handlerSocket = akri.resolve("real.sock");
    handler =
        NettyServerBuilder.forAddress(new DomainSocketAddress(handlerSocket.toString()))
            .channelType(EpollServerDomainSocketChannel.class)
            .bossEventLoopGroup(loop)
            .workerEventLoopGroup(loop)
            .addService(new Handler(share))
            .build()
            .start();

    ConfigBuilder config =
        new ConfigBuilder(api.serviceAccountConfig("default", "jakri-agent"))
            .withRequestRetryBackoffLimit(Agent.API_RETRIES)
            .withRequestRetryBackoffInterval(Agent.API_RETRY_INTERVAL_MS);
    AgentOptions options =
        new AgentOptions(
                NODE,
                false,
                Optional.empty(),
                false,
                root.resolve("varlib").resolve("device-plugins"),
                root.resolve("varlib").resolve("pod-resources").resolve("kubelet.sock"),
                K8S_TARGET.resolve("plugins"),
                Duration.ofSeconds(60),
                RECLAIM_GRACE)
            .inCluster(ns, true)
            .withExternalHandlers(Optional.of(new ExternalHandlers.Options(akri)));
    agent = Agent.start(options, Optional.of(api.client(config.build())), events::add);
    register(akri, handlerSocket);

    long t0 = System.nanoTime();
    api.apply(
        """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata: {name: %s, namespace: %s}
        spec:
          capacity: 2
          discoveryHandler: {name: %s, discoveryDetails: ""}
        """
            .formatted(CONFIG, ns, HANDLER));
    await("Register accepted: both resources in the Node's allocatable")
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> hasAll(node().getStatus().getAllocatable()));
    registerMs = (System.nanoTime() - t0) / 1_000_000;
  }

  @Test
  @Order(1)
  void registerIsAcceptedIntoTheNodesCapacityAndAllocatable() {
    Node node = node();
    for (String resource : List.of(INSTANCE_RESOURCE, CLASS_RESOURCE)) {
      assertThat(node.getStatus().getCapacity()).containsKey(resource);
      assertThat(node.getStatus().getAllocatable()).containsKey(resource);
      assertThat(count(node.getStatus().getAllocatable().get(resource))).isEqualTo(2);
    }
    assertThat(events)
        .anyMatch(
            e ->
                e instanceof AgentReport.DevicePlugin d
                    && d.report() instanceof DevicePluginReport.Registered r
                    && r.resource().equals(INSTANCE_RESOURCE));
    System.out.println("REAL_KUBELET register_ms=" + registerMs);
  }

  @Test
  @Order(2)
  void podsAreAdmittedAndRunWithTheAllocateAnswer() throws Exception {
    String h = INSTANCE.substring(INSTANCE.lastIndexOf('-') + 1).toUpperCase();
    runPod(
        "on-instance",
        INSTANCE_RESOURCE,
        List.of("JAKRI_REAL_GREETING=" + GREETING, "JAKRI_REAL_GREETING_" + h + "=" + GREETING));
    runPod(
        "on-class",
        CLASS_RESOURCE,
        List.of(
            "AKRISH_REAL_DEV_NUM_DEVICES=1",
            "AKRISH_REAL_DEV_DEV0_JAKRI_REAL_GREETING=" + GREETING,
            "JAKRI_REAL_GREETING_" + h + "=" + GREETING));
    // Both slots are recorded in the Instance, written by the agent's ServiceAccount (the only
    // writer of Instances here): one through the Instance resource, one through the class.
    Map<String, String> usage = instance().getSpec().getDeviceUsage();
    assertThat(usage.values()).contains(NODE);
    assertThat(usage.values()).anyMatch(v -> v.startsWith("C:") && v.endsWith(":" + NODE));
  }

  private void runPod(String name, String resource, List<String> env) throws Exception {
    int allocatesBefore = allocates(resource);
    long t0 = System.nanoTime();
    Pod pod =
        admin
            .pods()
            .inNamespace(ns)
            .resource(
                admin
                    .getKubernetesSerialization()
                    .unmarshal(
                        """
                        apiVersion: v1
                        kind: Pod
                        metadata: {name: %s, namespace: %s}
                        spec:
                          nodeName: %s
                          restartPolicy: Never
                          terminationGracePeriodSeconds: 1
                          automountServiceAccountToken: false
                          containers:
                          - name: c
                            image: docker.io/local/busybox:1
                            imagePullPolicy: Never
                            command: [sh, -c, 'env; ls -l /dev/jakri-null; cat /mnt/jakri/hello.txt; echo JAKRI-READY; exec sleep 3600']
                            resources:
                              limits: {"%s": "1"}
                        """
                            .formatted(name, ns, NODE, resource),
                        Pod.class))
            .create();
    pods.put(name, pod);
    Pod running =
        await(name + " Running")
            .atMost(Duration.ofSeconds(90))
            .pollInterval(Duration.ofMillis(200))
            .until(
                () -> admin.pods().inNamespace(ns).withName(name).get(),
                p -> p != null && "Running".equals(p.getStatus().getPhase()));
    long runningMs = (System.nanoTime() - t0) / 1_000_000;
    assertThat(allocates(resource)).as("Allocate calls").isGreaterThan(allocatesBefore);

    // The kubelet's PodResources API lists the device for the container.
    Set<DeviceInUse> inUse = podResources();
    List<String> ids =
        inUse.stream()
            .filter(d -> d.resourceName().equals(resource))
            .map(DeviceInUse::deviceId)
            .toList();
    assertThat(ids).as("PodResources devices of " + resource).isNotEmpty();

    // What the container got, in its own output.
    Path log =
        root.resolve("varlogpods")
            .resolve(ns + "_" + name + "_" + running.getMetadata().getUid())
            .resolve("c")
            .resolve("0.log");
    String out =
        await(name + " log")
            .atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(200))
            .until(
                () -> Files.exists(log) ? Files.readString(log) : "",
                s -> s.contains("JAKRI-READY"));
    List<String> lines =
        out.lines().map(l -> l.split(" ", 4)).filter(p -> p.length == 4).map(p -> p[3]).toList();
    assertThat(lines).containsAll(env);
    assertThat(lines).anyMatch(l -> l.matches("^c.*\\b1,\\s+3\\b.*/dev/jakri-null$"));
    assertThat(lines).contains(MOUNTED);
    System.out.println(
        "REAL_KUBELET pod="
            + name
            + " resource="
            + resource
            + " devices="
            + ids
            + " allocate_to_running_ms="
            + runningMs);
  }

  @Test
  @Order(3)
  void theAgentsSocketsAndTheKubeletsViewAgree() throws Exception {
    Set<String> served = agent.devicePlugins().served();
    assertThat(served).contains(INSTANCE_RESOURCE, CLASS_RESOURCE);
    Map<String, Quantity> capacity = node().getStatus().getCapacity();
    for (String resource : served) {
      assertThat(agent.devicePlugins().socketOf(resource).orElseThrow()).exists();
      assertThat(capacity).as("Node capacity").containsKey(resource);
    }
    JsonNode checkpoint =
        JSON.readTree(
            root.resolve("varlib")
                .resolve("device-plugins")
                .resolve("kubelet_internal_checkpoint")
                .toFile());
    JsonNode registered = checkpoint.path("Data").path("RegisteredDevices");
    for (String resource : served) {
      assertThat(registered.has(resource)).as("checkpoint registers " + resource).isTrue();
    }
    // Every device the kubelet reports in use is in its checkpoint under the Pod that has it.
    Set<DeviceInUse> inUse = podResources();
    assertThat(inUse).hasSize(2);
    List<String> entries = new ArrayList<>();
    for (JsonNode e : checkpoint.path("Data").path("PodDeviceEntries")) {
      e.path("DeviceIDs")
          .fields()
          .forEachRemaining(
              numa ->
                  numa.getValue()
                      .forEach(
                          id -> entries.add(e.path("ResourceName").asText() + "=" + id.asText())));
    }
    for (DeviceInUse d : inUse) {
      assertThat(entries).contains(d.resourceName() + "=" + d.deviceId());
    }
  }

  @Test
  @Order(4)
  void deletingThePodsFreesTheirSlotsAfterTheReclaimGrace() {
    long t0 = System.nanoTime();
    deletePods();
    long goneMs = (System.nanoTime() - t0) / 1_000_000;
    await("slots free")
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(200))
        .until(
            () ->
                instance().getSpec().getDeviceUsage().values().stream().allMatch(String::isEmpty));
    long freedMs = (System.nanoTime() - t0) / 1_000_000;
    System.out.println(
        "REAL_KUBELET pods_deleted_ms="
            + goneMs
            + " slots_freed_ms="
            + freedMs
            + " reclaim_grace_ms="
            + RECLAIM_GRACE.toMillis());
  }

  @Test
  @Order(5)
  void aKubeletRestartReRegistersEveryResource() throws Exception {
    Set<String> served = agent.devicePlugins().served();
    stopKubelet();
    int seen = events.size();
    long t0 = System.nanoTime();
    startKubelet();
    await("every resource registered again")
        .atMost(Duration.ofSeconds(120))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> registeredSince(seen).containsAll(served));
    long registeredMs = (System.nanoTime() - t0) / 1_000_000;
    await("Node capacity again")
        .atMost(Duration.ofSeconds(120))
        .pollInterval(Duration.ofMillis(200))
        .until(this::nodeReady);
    await("Node allocatable again")
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(200))
        .until(
            () ->
                hasAll(node().getStatus().getAllocatable())
                    && node().getStatus().getAllocatable().keySet().containsAll(served));
    long capacityMs = (System.nanoTime() - t0) / 1_000_000;
    assertThat(node().getStatus().getCapacity()).containsKeys(served.toArray(String[]::new));
    System.out.println(
        "REAL_KUBELET restart_reregister_ms="
            + registeredMs
            + " restart_capacity_ms="
            + capacityMs);
  }

  // ---- the pieces ----

  /**
   * The Akri-protocol handler: one device with env, a mount and a device node, stream kept open.
   */
  final class Handler extends DiscoveryHandlerGrpc.DiscoveryHandlerImplBase {
    private final Path share;

    Handler(Path share) {
      this.share = share;
    }

    @Override
    public void discover(
        Discovery.DiscoverRequest request, StreamObserver<Discovery.DiscoverResponse> responses) {
      responses.onNext(
          Discovery.DiscoverResponse.newBuilder()
              .addDevices(
                  Discovery.Device.newBuilder()
                      .setId(DEVICE_ID)
                      .putProperties("JAKRI_REAL_GREETING", GREETING)
                      .addMounts(
                          Discovery.Mount.newBuilder()
                              .setContainerPath("/mnt/jakri")
                              .setHostPath(share.toString())
                              .setReadOnly(true))
                      .addDeviceSpecs(
                          Discovery.DeviceSpec.newBuilder()
                              .setContainerPath("/dev/jakri-null")
                              .setHostPath("/dev/null")
                              .setPermissions("rw")))
              .build());
      discoverStreams.add(responses);
    }
  }

  private void register(Path akri, Path endpoint) {
    Path registration = akri.resolve("agent-registration.sock");
    ManagedChannel channel =
        NettyChannelBuilder.forAddress(new DomainSocketAddress(registration.toString()))
            .channelType(EpollDomainSocketChannel.class)
            .eventLoopGroup(loop)
            .usePlaintext()
            .build();
    try {
      await("handler registered")
          .atMost(Duration.ofSeconds(30))
          .ignoreExceptions()
          .until(
              () -> {
                RegistrationGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(5, TimeUnit.SECONDS)
                    .registerDiscoveryHandler(
                        Discovery.RegisterDiscoveryHandlerRequest.newBuilder()
                            .setName(HANDLER)
                            .setEndpoint(endpoint.toString())
                            .setEndpointType(
                                Discovery.RegisterDiscoveryHandlerRequest.EndpointType.UDS)
                            .setShared(false)
                            .build());
                return true;
              });
    } finally {
      channel.shutdownNow();
    }
  }

  private Set<DeviceInUse> podResources() throws Exception {
    try (GrpcPodResourcesClient client =
        new GrpcPodResourcesClient(
            root.resolve("varlib").resolve("pod-resources").resolve("kubelet.sock"),
            loop,
            executor,
            Duration.ofSeconds(5))) {
      return client.devicesInUse();
    }
  }

  private Set<String> registeredSince(int index) {
    return events.subList(index, events.size()).stream()
        .filter(e -> e instanceof AgentReport.DevicePlugin)
        .map(e -> ((AgentReport.DevicePlugin) e).report())
        .filter(e -> e instanceof DevicePluginReport.Registered)
        .map(e -> ((DevicePluginReport.Registered) e).resource())
        .collect(Collectors.toSet());
  }

  private int allocates(String resource) {
    return (int)
        events.stream()
            .filter(
                e ->
                    e instanceof AgentReport.DevicePlugin d
                        && d.report() instanceof DevicePluginReport.Allocated a
                        && a.resource().equals(resource)
                        && a.outcome() instanceof AllocateOutcome.Granted)
            .count();
  }

  private Instance instance() {
    return admin.resources(Instance.class).inNamespace(ns).withName(INSTANCE).get();
  }

  private Node node() {
    return admin.nodes().withName(NODE).get();
  }

  private boolean nodeReady() {
    Node n = node();
    return n != null
        && n.getStatus() != null
        && n.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  private static boolean hasAll(Map<String, Quantity> resources) {
    return resources != null
        && count(resources.get(INSTANCE_RESOURCE)) == 2
        && count(resources.get(CLASS_RESOURCE)) == 2;
  }

  private static long count(Quantity q) {
    return q == null ? -1 : q.getNumericalAmount().longValue();
  }

  private Path busyboxImage(Path k8s) throws Exception {
    // Built once per target/ (the .deb comes from Debian's mirror through apt-get download);
    // the script's temp dir is kept inside target/ too.
    Path dir = Files.createDirectories(K8S_TARGET.resolve("rk-image"));
    Path tar = dir.resolve("busybox.tar");
    if (Files.exists(tar)) {
      return tar;
    }
    Path tmp = Files.createDirectories(dir.resolve("tmp"));
    Path part = dir.resolve("busybox.tar.part");
    ProcessBuilder pb =
        new ProcessBuilder(
                "/usr/bin/python3",
                k8s.resolve("make-busybox-image.py").toString(),
                part.toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("make.log").toFile());
    pb.environment().put("TMPDIR", tmp.toString());
    Process p = pb.start();
    if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
      p.destroyForcibly();
      RealKube.unavailable(
          "make-busybox-image.py failed: " + Files.readString(dir.resolve("make.log")));
    }
    deleteTree(tmp);
    Files.move(part, tar, StandardCopyOption.ATOMIC_MOVE);
    return tar;
  }

  private void writeNodeFiles(Path k8s) throws IOException {
    // The kubelet's config with ports of our own (other kubelets may run on this machine) and
    // eviction thresholds that a busy shared disk does not trip.
    int[] ports = FreePorts.take(2);
    String config =
        Files.readString(k8s.resolve("kubelet-config.yaml"))
                .replaceAll("(?m)^port: .*$", "port: " + ports[0])
                .replaceAll("(?m)^healthzPort: .*$", "healthzPort: " + ports[1])
            + "nodeStatusUpdateFrequency: 2s\n"
            + "evictionHard: {memory.available: 1Mi, nodefs.available: 1%, imagefs.available: 1%,"
            + " nodefs.inodesFree: 1%}\n";
    Files.writeString(root.resolve("config.yaml"), config);
    Files.writeString(
        root.resolve("containerd.toml"),
        Files.readString(k8s.resolve("containerd-config.toml")).replace("@ROOT@", root.toString()));
    Path bin = Files.createDirectories(root.resolve("cni").resolve("bin"));
    Path conf = Files.createDirectories(root.resolve("cni").resolve("net.d"));
    Files.copy(k8s.resolve("cni").resolve("lo-eth0"), bin.resolve("lo-eth0"));
    Files.copy(Path.of("/usr/lib/cni/loopback"), bin.resolve("loopback"));
    bin.resolve("lo-eth0").toFile().setExecutable(true);
    bin.resolve("loopback").toFile().setExecutable(true);
    Files.copy(
        k8s.resolve("cni").resolve("99-loopback.conflist"), conf.resolve("99-loopback.conflist"));
  }

  /**
   * Runs start-kubelet.sh inside a mount namespace of ours in which ROOT/run-containerd is
   * bind-mounted over /run/containerd: containerd 1.6 keeps its shims' sockets and runc's state
   * there whatever its configuration says, so this keeps them under ROOT too (the script's own
   * namespace inherits the mount). The PID stays the kubelet's: unshare, bash and the script exec.
   */
  private void startKubelet() throws IOException {
    Path run = Files.createDirectories(root.resolve("run-containerd"));
    kubelet =
        new ProcessBuilder(
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "bash",
                "-c",
                "set -e; mkdir -p /run/containerd; mount --bind \"$1\" /run/containerd;"
                    + " shift; exec bash \"$@\"",
                "start-kubelet",
                run.toString(),
                startScript.toString(),
                root.toString(),
                kubeletBinary.toString(),
                kubeconfig.toString(),
                NODE,
                imageTar.toString())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(root.resolve("kubelet.log").toFile()))
            .start();
  }

  /** Stops the kubelet and its containerd (a node restart for both); running pods' shims stay. */
  private void stopKubelet() throws IOException {
    stop(kubelet.toHandle());
    Path pidFile = root.resolve("containerd.pid");
    if (Files.exists(pidFile)) {
      ProcessHandle.of(Long.parseLong(Files.readString(pidFile).trim()))
          .ifPresent(RealKubeletIT::stop);
    }
  }

  private static void stop(ProcessHandle p) {
    if (!p.isAlive()) {
      return;
    }
    p.destroy();
    try {
      p.onExit().get(20, TimeUnit.SECONDS);
    } catch (Exception e) {
      p.destroyForcibly();
      try {
        p.onExit().get(10, TimeUnit.SECONDS);
      } catch (Exception ignored) {
        // reported by the caller's checks
      }
    }
  }

  private void deletePods() {
    for (String name : pods.keySet()) {
      admin.pods().inNamespace(ns).withName(name).delete();
    }
    // The kubelet removes the Pod objects once their containers stopped.
    await("pods gone")
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(200))
        .until(
            () ->
                pods.keySet().stream()
                    .allMatch(n -> admin.pods().inNamespace(ns).withName(n).get() == null));
    pods.clear();
  }

  /** containerd's shims for our containerd (their command line names its socket), with children. */
  private List<ProcessHandle> shims() {
    String address = root.resolve("containerd").resolve("containerd.sock").toString();
    return ProcessHandle.allProcesses()
        .filter(p -> p.info().arguments().map(a -> List.of(a).contains(address)).orElse(false))
        .filter(p -> p.info().command().map(c -> c.contains("containerd-shim")).orElse(false))
        .toList();
  }

  @AfterAll
  void stopEverything() throws Exception {
    if (api == null) {
      return;
    }
    List<Throwable> problems = new ArrayList<>();
    try {
      if (kubelet != null && kubelet.isAlive() && !pods.isEmpty()) {
        deletePods();
      }
    } catch (RuntimeException e) {
      problems.add(e);
    }
    if (agent != null) {
      agent.close();
    }
    discoverStreams.forEach(
        s -> {
          try {
            s.onCompleted();
          } catch (RuntimeException ignored) {
            // stream already gone
          }
        });
    if (handler != null) {
      handler.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (kubelet != null) {
      stopKubelet();
    }
    // Pods' processes: each shim of our containerd and everything below it.
    for (ProcessHandle shim : shims()) {
      List<ProcessHandle> below = shim.descendants().toList();
      below.forEach(ProcessHandle::destroyForcibly);
      below.forEach(p -> p.onExit().join());
      stop(shim);
    }
    if (loop != null) {
      loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }
    if (executor != null) {
      executor.shutdownNow();
    }
    if (admin != null && ns != null) {
      try {
        admin.nodes().withName(NODE).delete();
      } catch (KubernetesClientException e) {
        problems.add(e);
      }
    }
    // The empty mount points start-kubelet.sh made on the host, when this test made them.
    for (String p : createdMountPoints) {
      try (Stream<Path> entries = Files.list(Path.of(p))) {
        if (entries.findAny().isEmpty()) {
          Files.delete(Path.of(p));
        }
      } catch (IOException e) {
        problems.add(e);
      }
    }
    assertThat(shims()).as("shims left").isEmpty();
    if (!problems.isEmpty()) {
      throw new AssertionError("teardown: " + problems, problems.get(0));
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
