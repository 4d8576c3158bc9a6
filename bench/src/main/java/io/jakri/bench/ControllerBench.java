package io.jakri.bench;

import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import io.jakri.crd.InstanceSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * The controller's footprint, so the chart's requests and limits for it are measured: the shipped
 * controller jar in its own JVM against the mock API server ({@link ClusterBench.MockApi}), idle
 * with one Configuration that has a broker Pod spec, then with N Instances until it has created a
 * broker Pod and a Service for each. Figures: RSS idle and at N, heap after GC at N, threads, CPU
 * and wall time to reconcile the burst. Run with the JVM's defaults (what the chart ships for the
 * controller) and with the agent's recommended flags.
 */
final class ControllerBench {

  private static final String NS = "default";
  private static final String NODE = "bench-node";

  private final Bench.Options options;
  private final Path work;
  private final BiConsumer<String, Double> add;

  ControllerBench(Bench.Options options, Path work, BiConsumer<String, Double> add) {
    this.options = options;
    this.work = work;
    this.add = add;
  }

  /** The controller jar beside the agent jar's module ({@code controller/target}). */
  Path controllerJar() {
    return options
        .agentJar()
        .getParent()
        .getParent()
        .resolveSibling("controller")
        .resolve("target")
        .resolve("jakri-controller.jar");
  }

  /**
   * One run with {@code jvm} flags; figure names get {@code label} (e.g. {@code defaults}) so both
   * flag sets are reported.
   */
  void run(String label, List<String> jvm, int n, int run) throws Exception {
    Path root = Files.createDirectories(work.resolve("controller-" + label + "-" + run));
    try (ClusterBench.MockApi api = ClusterBench.MockApi.start(options, root);
        KubernetesClient client = api.client("jakri-bench-controller")) {
      ClusterBench.createNode(client, NODE);
      Configuration configuration =
          client
              .resources(Configuration.class)
              .inNamespace(NS)
              .resource(
                  client
                      .getKubernetesSerialization()
                      .unmarshal(configuration(NS), Configuration.class))
              .create();
      Map<String, String> env = Map.of("KUBECONFIG", api.kubeconfig.toString());
      List<String> args =
          List.of("-jar", controllerJar().toString(), "--namespace", NS, "--log-format", "text");
      try (ChildJvm controller = ChildJvm.start(jvm, env, args, root.resolve("controller.log"))) {
        // Idle: one Configuration, no Instances, caches synced.
        controller.awaitLog("controller started in namespace", Duration.ofMinutes(2));
        Bench.settle();
        add.accept("controller_" + label + "_rss_idle_mb", controller.rssKb() / 1024.0);
        add.accept("controller_" + label + "_threads_idle", (double) controller.threads());

        // jcmd first: the controller's CPU for answering it is not the burst's.
        long started0 = controller.threadsStarted();
        long cpu0 = controller.cpuMs();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
          client.resource(instance(configuration, String.format("cam-%06x", i), NS, NODE)).create();
        }
        awaitCount(client, "pods", n, controller);
        awaitCount(client, "services", n + 1, controller);
        add.accept("controller_" + label + "_burst_" + n + "_s", (System.nanoTime() - t0) / 1e9);
        add.accept(
            "controller_" + label + "_burst_" + n + "_cpu_s", (controller.cpuMs() - cpu0) / 1000.0);
        add.accept(
            "controller_" + label + "_burst_" + n + "_threads_started",
            (double) (controller.threadsStarted() - started0));
        Bench.settle();
        add.accept(
            "controller_" + label + "_rss_" + n + "_instances_mb", controller.rssKb() / 1024.0);
        add.accept(
            "controller_" + label + "_threads_" + n + "_instances", (double) controller.threads());
        add.accept(
            "controller_" + label + "_heap_" + n + "_instances_mb",
            controller.heapAfterGcBytes() / 1024.0 / 1024.0);
      }
    }
  }

  private static void awaitCount(
      KubernetesClient client, String kind, int atLeast, ChildJvm controller) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
    while (System.nanoTime() < deadline) {
      int count =
          kind.equals("pods")
              ? client.pods().inNamespace(NS).list().getItems().size()
              : client.services().inNamespace(NS).list().getItems().size();
      if (count >= atLeast) {
        return;
      }
      if (!controller.alive()) {
        throw new IllegalStateException("controller exited: " + Files.readString(controller.log()));
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException("controller did not create " + atLeast + " " + kind);
  }

  /** Instance {@code name} of the broker Configuration {@code cam}, on {@code node}. */
  static Instance instance(
      Configuration configuration, String name, String namespace, String node) {
    Instance i = new Instance();
    i.getMetadata().setName(name);
    i.getMetadata().setNamespace(namespace);
    i.getMetadata().setLabels(Map.of("akri.sh/configuration", "cam"));
    i.getMetadata()
        .setOwnerReferences(
            List.of(
                new OwnerReferenceBuilder()
                    .withApiVersion("akri.sh/v0")
                    .withKind("Configuration")
                    .withName("cam")
                    .withUid(configuration.getMetadata().getUid())
                    .build()));
    InstanceSpec spec = new InstanceSpec();
    spec.setConfigurationName("cam");
    // Required by the CRD (a real API server refuses an Instance without it; the mock does not).
    spec.setCdiName("akri.sh/cam=" + name.substring(name.lastIndexOf('-') + 1));
    spec.setShared(false);
    spec.setCapacity(1);
    spec.setNodes(new ArrayList<>(List.of(node)));
    Map<String, String> usage = new LinkedHashMap<>();
    usage.put(name + "-0", "");
    spec.setDeviceUsage(usage);
    i.setSpec(spec);
    return i;
  }

  /** The Configuration {@code cam} in {@code namespace}: a broker Pod and Services per Instance. */
  /** Creates {@link #configuration} in {@code namespace}. */
  static Configuration createConfiguration(KubernetesClient admin, String namespace) {
    return admin
        .resources(Configuration.class)
        .inNamespace(namespace)
        .resource(
            admin
                .getKubernetesSerialization()
                .unmarshal(configuration(namespace), Configuration.class))
        .create();
  }

  static String configuration(String namespace) {
    return """
      apiVersion: akri.sh/v0
      kind: Configuration
      metadata:
        name: cam
        namespace: %s
      spec:
        discoveryHandler:
          name: simulated
        capacity: 1
        brokerSpec:
          brokerPodSpec:
            containers:
              - name: broker
                image: nginx:1
                resources:
                  limits:
                    "{{PLACEHOLDER}}": "1"
        instanceServiceSpec:
          ports:
            - name: http
              port: 80
        configurationServiceSpec:
          ports:
            - name: http
              port: 80
      """
        .formatted(namespace);
  }
}
