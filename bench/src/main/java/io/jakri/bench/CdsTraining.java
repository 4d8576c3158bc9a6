package io.jakri.bench;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.jakri.crd.Configuration;
import io.jakri.crd.InstanceNames;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.kubelet.v1beta1.AllocateRequest;
import io.jakri.kubelet.v1beta1.ContainerAllocateRequest;
import io.jakri.kubelet.v1beta1.DevicePluginGrpc;
import io.jakri.testing.kube.FreePorts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Writes the class lists the container images' AppCDS archives are dumped from ({@code
 * images/dump-app-cds.sh}): runs the agent and the controller jars each once, in cluster mode, as
 * the chart runs them, against the fabric8 mock API server (in this JVM, so no cluster is needed to
 * build the images), with {@code -XX:DumpLoadedClassList}, through a typical start: the agent
 * discovers two simulated devices, advertises them to a kubelet emulator (in this JVM) and answers
 * an Allocate; the controller becomes ready (webhook certificate included) and creates the broker
 * Pod of an Instance. Each is then stopped with SIGTERM. A step that does not happen within two
 * minutes fails the build with the component's log.
 *
 * <p>Usage: {@code CdsTraining <agent jar> <plugins dir> <controller jar> <out dir>}; writes {@code
 * agent.classlist} and {@code controller.classlist} into the out dir.
 */
public final class CdsTraining {

  private static final String NS = "default";
  private static final String NODE = "training";
  private static final Duration STEP = Duration.ofMinutes(2);

  /** The chart's JIT and GC choices (the class list does not depend on them, the timing does). */
  private static final List<String> FLAGS = List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

  private CdsTraining() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: CdsTraining <agent jar> <plugins dir> <controller jar> <out dir>");
      System.exit(2);
    }
    Path agentJar = Path.of(args[0]);
    Path plugins = Path.of(args[1]);
    Path controllerJar = Path.of(args[2]);
    Path out = Files.createDirectories(Path.of(args[3]));
    Path work = Files.createTempDirectory("jakri-cds-training");
    KubernetesMockServer server = MockApiServer.serve(new MockApiServer.CountingDispatcher());
    try (KubernetesClient admin = server.createClient()) {
      Path kubeconfig = work.resolve("kubeconfig");
      Files.writeString(
          kubeconfig, MockApiServer.kubeconfig("http://127.0.0.1:" + server.getPort()));
      Map<String, String> env = Map.of("KUBECONFIG", kubeconfig.toString());
      ClusterBench.createNode(admin, NODE);
      agent(admin, env, agentJar, plugins, work, out.resolve("agent.classlist"));
      controller(admin, env, controllerJar, work, out.resolve("controller.classlist"));
    } finally {
      server.destroy();
      try (var paths = Files.walk(work)) {
        paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    System.out.println(
        "class lists: "
            + Files.readAllLines(out.resolve("agent.classlist")).size()
            + " lines (agent), "
            + Files.readAllLines(out.resolve("controller.classlist")).size()
            + " lines (controller) in "
            + out);
  }

  private static void agent(
      KubernetesClient admin,
      Map<String, String> env,
      Path jar,
      Path plugins,
      Path work,
      Path classlist)
      throws Exception {
    Path dir = Files.createDirectories(work.resolve("agent"));
    @SuppressWarnings("deprecation")
    EventLoopGroup group = new EpollEventLoopGroup(1);
    KubeletEmulator emulator = FootprintBench.emulator(dir, group);
    try {
      List<String> args =
          List.of(
              "-cp",
              jar.toString(),
              "io.jakri.agent.cli.Main",
              "--plugins-dir=" + plugins,
              "--node-name=" + NODE,
              "--namespace=" + NS,
              "--device-plugin-dir=" + dir.resolve("dp"),
              "--pod-resources-socket=" + dir.resolve("pr").resolve("kubelet.sock"),
              "--log-format=json");
      try (ChildJvm agent = ChildJvm.start(flags(classlist), env, args, dir.resolve("agent.log"))) {
        Configuration configuration =
            admin
                .getKubernetesSerialization()
                .unmarshal(ClusterBench.simulatedShared("train", 2, 2), Configuration.class);
        admin.resources(Configuration.class).inNamespace(NS).resource(configuration).create();
        String resource = awaitInstanceResource(emulator, agent);
        String instance = resource.substring("akri.sh/".length());
        Path socket = ClusterBench.awaitSocket(dir.resolve("dp"), instance, agent);
        var channel = ClusterBench.channel(group, socket);
        try {
          DevicePluginGrpc.newBlockingStub(channel)
              .withDeadlineAfter(STEP.toSeconds(), TimeUnit.SECONDS)
              .allocate(
                  AllocateRequest.newBuilder()
                      .addContainerRequests(
                          ContainerAllocateRequest.newBuilder()
                              .addDevicesIds(InstanceNames.slotId(instance, 0)))
                      .build());
        } finally {
          channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
      }
      requireList(classlist, dir.resolve("agent.log"));
    } finally {
      emulator.close();
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }

  private static void controller(
      KubernetesClient admin, Map<String, String> env, Path jar, Path work, Path classlist)
      throws Exception {
    Path dir = Files.createDirectories(work.resolve("controller"));
    Configuration configuration = ControllerBench.createConfiguration(admin, NS);
    admin.resource(FootprintBench.webhookConfiguration()).create();
    int[] ports = FreePorts.take(2);
    int metricsPort = ports[0];
    List<String> args =
        List.of(
            "-cp",
            jar.toString(),
            "io.jakri.controller.Main",
            "--log-format=json",
            "--metrics-port=" + metricsPort,
            "--webhook-port=" + ports[1],
            "--webhook-names=" + FootprintBench.WEBHOOK + "." + NS + ".svc",
            "--webhook-configuration=" + FootprintBench.WEBHOOK);
    try (ChildJvm controller =
        ChildJvm.start(flags(classlist), env, args, dir.resolve("controller.log"))) {
      FootprintBench.awaitReady(controller, metricsPort);
      admin.resource(ControllerBench.instance(configuration, "training-cam", NS, NODE)).create();
      long deadline = System.nanoTime() + STEP.toNanos();
      while (admin.pods().inNamespace(NS).list().getItems().isEmpty()) {
        if (System.nanoTime() > deadline || !controller.alive()) {
          throw new IllegalStateException(
              "the controller made no broker Pod; its log: " + controller.log());
        }
        Thread.sleep(100);
      }
    }
    requireList(classlist, dir.resolve("controller.log"));
  }

  private static List<String> flags(Path classlist) {
    List<String> flags = new ArrayList<>(FLAGS);
    flags.add("-XX:DumpLoadedClassList=" + classlist);
    return flags;
  }

  /** The first Instance resource (not the Configuration's class resource) the kubelet sees. */
  private static String awaitInstanceResource(KubeletEmulator emulator, ChildJvm agent)
      throws Exception {
    long deadline = System.nanoTime() + STEP.toNanos();
    while (System.nanoTime() < deadline && agent.alive()) {
      for (String resource : emulator.capacity().keySet()) {
        if (resource.startsWith("akri.sh/train-")) {
          return resource;
        }
      }
      Thread.sleep(50);
    }
    throw new IllegalStateException("the agent advertised no Instance; its log: " + agent.log());
  }

  private static void requireList(Path classlist, Path log) throws Exception {
    if (!Files.isRegularFile(classlist) || Files.size(classlist) == 0) {
      throw new IllegalStateException("no class list was written; see " + log);
    }
  }
}
