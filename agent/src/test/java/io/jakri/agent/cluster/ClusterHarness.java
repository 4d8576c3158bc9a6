package io.jakri.agent.cluster;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.agent.EmulatedKubelet;
import io.jakri.agent.TestAgent;
import io.jakri.agent.instance.StoreException;
import io.jakri.crd.Configuration;
import io.jakri.crd.Crds;
import io.jakri.crd.Instance;
import io.jakri.crd.SlotUsage;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.kubelet.v1beta1.AllocateRequest;
import io.jakri.kubelet.v1beta1.ContainerAllocateRequest;
import io.jakri.kubelet.v1beta1.DevicePluginGrpc;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Several cluster-mode agents, one per node, each with its own device-plugin dir and kubelet
 * emulator, all against one API server: the real one ({@link RealApiPeer}, each agent on its own
 * service-account token) or fabric8's mock in CRUD mode ({@link MockApiPeer}). For integration
 * tests.
 */
final class ClusterHarness implements AutoCloseable {

  static final Path PLUGINS = Path.of("target", "plugins").toAbsolutePath();
  static final String NS = "default";

  final ApiPeer peer;
  final KubernetesClient admin;

  /** The namespace of this harness's Configurations and Instances. */
  final String ns;

  final Path root;
  private final Map<String, Agent> agents = new TreeMap<>();
  // Clients that dial the agents' device-plugin sockets the way the kubelet does.
  private final EventLoopGroup clientLoop = new EpollEventLoopGroup(2);
  private final List<ManagedChannel> channels = new ArrayList<>();

  ClusterHarness(KubernetesMockServer server, KubernetesClient admin, Path root) {
    this(new MockApiPeer(server, admin), root);
  }

  ClusterHarness(ApiPeer peer, Path root) {
    this.peer = peer;
    this.admin = peer.admin();
    this.ns = peer.namespace();
    this.root = root;
    // The CRDs as shipped (crds/*.akri.sh.yaml); the mock server needs them for the status
    // subresource.
    for (CustomResourceDefinition crd : Crds.load()) {
      if (admin
              .apiextensions()
              .v1()
              .customResourceDefinitions()
              .withName(crd.getMetadata().getName())
              .get()
          == null) {
        admin.apiextensions().v1().customResourceDefinitions().resource(crd).create();
      }
    }
  }

  /** What every agent started from now on gets changed in its options (e.g. --label-node). */
  private java.util.function.UnaryOperator<AgentOptions> optionsEdit = o -> o;

  void editOptions(java.util.function.UnaryOperator<AgentOptions> edit) {
    this.optionsEdit = edit;
  }

  /** Starts (or restarts) the agent of {@code node}. */
  Agent start(String node, Duration offlineGrace) throws IOException {
    return start(node, offlineGrace, Duration.ofSeconds(20));
  }

  /** Starts (or restarts) the agent of {@code node} with a reclaim grace. */
  Agent start(String node, Duration offlineGrace, Duration reclaimGrace) throws IOException {
    return start(node, offlineGrace, reclaimGrace, PLUGINS, true);
  }

  /** Starts (or restarts) the agent of {@code node} watching {@code namespaces}. */
  Agent start(String node, Duration offlineGrace, WatchedNamespaces namespaces) throws IOException {
    return start(node, offlineGrace, Duration.ofSeconds(20), PLUGINS, true, namespaces);
  }

  /** The device-plugin directory of {@code node}'s agent (where its kubelet.sock goes). */
  Path devicePluginDir(String node) {
    return root.resolve(node).resolve("device-plugins");
  }

  /**
   * Starts (or restarts) the agent of {@code node} with handler jars from {@code plugins} and,
   * unless {@code emulateKubelet}, without a kubelet emulator (the test serves {@link
   * #devicePluginDir}'s kubelet.sock itself, or nobody does).
   */
  Agent start(
      String node,
      Duration offlineGrace,
      Duration reclaimGrace,
      Path plugins,
      boolean emulateKubelet)
      throws IOException {
    return start(
        node, offlineGrace, reclaimGrace, plugins, emulateKubelet, WatchedNamespaces.of(ns));
  }

  private Agent start(
      String node,
      Duration offlineGrace,
      Duration reclaimGrace,
      Path plugins,
      boolean emulateKubelet,
      WatchedNamespaces namespaces)
      throws IOException {
    Path dir = root.resolve(node);
    Files.createDirectories(dir);
    AgentOptions options =
        new AgentOptions(
                node,
                false,
                Optional.empty(),
                emulateKubelet,
                dir.resolve("device-plugins"),
                dir.resolve("pod-resources").resolve("kubelet.sock"),
                plugins,
                offlineGrace,
                reclaimGrace)
            .inCluster(namespaces, true);
    Agent agent = Agent.start(optionsEdit.apply(options), Optional.of(peer.agentClient(node)));
    agents.put(node, agent);
    return agent;
  }

  /** Stops the agent of {@code node} (as on a restart: its Instances stay). */
  void stop(String node) {
    Agent agent = agents.remove(node);
    if (agent != null) {
      agent.close();
    }
  }

  /**
   * A client of the device-plugin server {@code node}'s agent runs for {@code resource}, dialled on
   * its socket as the kubelet would; closed with the harness.
   */
  DevicePluginGrpc.DevicePluginBlockingStub devicePlugin(String node, String resource) {
    Path socket = agent(node).devicePlugins().socketOf(resource).orElseThrow();
    ManagedChannel channel =
        NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .channelType(EpollDomainSocketChannel.class)
            .eventLoopGroup(clientLoop)
            .usePlaintext()
            .build();
    synchronized (channels) {
      channels.add(channel);
    }
    return DevicePluginGrpc.newBlockingStub(channel);
  }

  /** An Allocate request for one container asking for {@code slots}. */
  static AllocateRequest allocateRequest(String... slots) {
    return AllocateRequest.newBuilder()
        .addContainerRequests(
            ContainerAllocateRequest.newBuilder().addAllDevicesIds(List.of(slots)))
        .build();
  }

  Agent agent(String node) {
    return agents.get(node);
  }

  KubeletEmulator kubelet(String node) {
    return EmulatedKubelet.of(agents.get(node)).orElseThrow();
  }

  List<String> nodes() {
    return new ArrayList<>(agents.keySet());
  }

  /** Applies a Configuration from YAML (create or replace). */
  Configuration apply(String yaml) {
    return apply(ns, yaml);
  }

  /** Applies a Configuration from YAML (create or replace) in {@code namespace}. */
  Configuration apply(String namespace, String yaml) {
    peer.ensureNamespace(namespace);
    Configuration c = admin.getKubernetesSerialization().unmarshal(yaml, Configuration.class);
    return admin
        .resources(Configuration.class)
        .inNamespace(namespace)
        .resource(c)
        .createOr(existing -> existing.update());
  }

  /** Changes a stored Configuration, retrying when an agent's status write got in between. */
  void edit(String name, java.util.function.Consumer<Configuration> change) {
    await()
        .atMost(Duration.ofSeconds(10))
        .ignoreExceptionsInstanceOf(io.fabric8.kubernetes.client.KubernetesClientException.class)
        .until(
            () -> {
              Configuration c =
                  admin.resources(Configuration.class).inNamespace(ns).withName(name).get();
              change.accept(c);
              admin.resource(c).update();
              return true;
            });
  }

  /**
   * Frees every slot of an Instance as reclamation would: each running agent frees the slots its
   * node holds (the other nodes honour a free only from the holder), then the slots of nodes
   * without a running agent are freed through the API; waits until every running agent's store has
   * seen it.
   */
  void freeAllSlots(String instance) {
    agents.values().forEach(a -> a.slots().releaseHeld(instance));
    // Checked at once and then every 5 ms: Awaitility's default first wait and interval (100 ms
    // each) made each call cost at least 200 ms, most of a 200-Allocate test's time.
    await()
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(5))
        .atMost(Duration.ofSeconds(10))
        .ignoreExceptionsInstanceOf(io.fabric8.kubernetes.client.KubernetesClientException.class)
        .until(
            () -> {
              Instance current = instance(instance).orElseThrow();
              Map<String, String> usage =
                  new java.util.LinkedHashMap<>(current.getSpec().getDeviceUsage());
              if (usage.values().stream().allMatch(String::isEmpty)) {
                return true;
              }
              usage.replaceAll((k, v) -> "");
              current.getSpec().setDeviceUsage(usage);
              admin.resource(current).update();
              return true;
            });
    await()
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(5))
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                agents.values().stream()
                    .allMatch(
                        a -> {
                          try {
                            return a.instances().get(instance).stream()
                                .flatMap(i -> i.deviceUsage().values().stream())
                                .allMatch(u -> u instanceof SlotUsage.Free);
                          } catch (StoreException e) {
                            return false;
                          }
                        }));
  }

  /** The stored Configuration {@code name} of this harness's namespace, or null. */
  Configuration storedConfiguration(String name) {
    return admin.resources(Configuration.class).inNamespace(ns).withName(name).get();
  }

  /** Waits until there is exactly one Instance and it lists {@code nodes} nodes; its name. */
  String awaitOneInstanceOnNodes(int nodes) {
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                instances().size() == 1 && instances().get(0).getSpec().getNodes().size() == nodes);
    return instances().get(0).getMetadata().getName();
  }

  Optional<Instance> instance(String name) {
    return Optional.ofNullable(
        admin.resources(Instance.class).inNamespace(ns).withName(name).get());
  }

  List<Instance> instances() {
    return admin.resources(Instance.class).inNamespace(ns).list().getItems();
  }

  void awaitCapacity(String node, String resource, long count) {
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> kubelet(node).capacity().getOrDefault(resource, -1L) == count);
  }

  void awaitAllocatable(String node, String resource, long count) {
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> kubelet(node).allocatable().getOrDefault(resource, -1L) == count);
  }

  static String configuration(String name, String handler, int capacity, String details) {
    return TestAgent.configuration(name, handler, capacity, details);
  }

  @Override
  public void close() {
    synchronized (channels) {
      channels.forEach(ManagedChannel::shutdownNow);
    }
    for (String node : new ArrayList<>(agents.keySet())) {
      stop(node);
    }
    peer.close();
    try {
      clientLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
