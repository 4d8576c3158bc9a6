package io.jakri.controller;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeStatusBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.jakri.controller.broker.BrokerLabels;
import io.jakri.crd.Configuration;
import io.jakri.crd.Crds;
import io.jakri.crd.Instance;
import io.jakri.crd.InstanceSpec;
import io.jakri.testing.kube.RealApiServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.random.RandomGenerator;

/**
 * The controller against the real API server (RBAC on): the CRDs as shipped, the controller's RBAC
 * exactly as in {@code controller/rbac/controller-rbac.yaml}, and every controller started here
 * runs on a token of ServiceAccount {@code akri/jakri-controller}, so a verb the code needs and the
 * manifest lacks fails as it would in a cluster. Each cluster (one per test) gets a namespace of
 * its own; the admin client ({@link #client}) is the test's. Nodes are cluster-scoped: the ones a
 * test creates are deleted by {@link #close}, which also empties the namespace (nothing
 * garbage-collects, and a controller serving every namespace would otherwise find earlier tests'
 * objects).
 *
 * <p>{@link #close} fails the test if any request of a controller started here was refused by RBAC
 * ({@link Refusals}: every failed response is recorded and each 401/403 checked with a
 * SubjectAccessReview).
 */
final class RealCluster implements AutoCloseable {

  static final Path CONTROLLER_RBAC = Path.of("rbac", "controller-rbac.yaml").toAbsolutePath();
  static final String CONTROLLER_NAMESPACE = "akri";
  static final String CONTROLLER_ACCOUNT = "jakri-controller";
  private static final Set<RealApiServer> INSTALLED =
      Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));

  final RealApiServer api;
  final KubernetesClient client;
  final String ns;
  final Refusals refusals;
  private final Set<String> nodes = ConcurrentHashMap.newKeySet();
  private final Set<String> namespaces = ConcurrentHashMap.newKeySet();
  private final List<AutoCloseable> closables = new ArrayList<>();

  /** A started controller with its own client, executors and request counter. */
  record Running(
      Controller controller,
      KubernetesClient client,
      ApiCalls calls,
      ExecutorService workers,
      ScheduledExecutorService scheduler)
      implements AutoCloseable {
    @Override
    public void close() {
      controller.close();
      workers.shutdownNow();
      scheduler.shutdownNow();
      client.close();
    }
  }

  /**
   * A cluster with a namespace {@code <prefix>-<n>} that has its {@code default} ServiceAccount.
   */
  RealCluster(RealApiServer api, String prefix) {
    this.api = api;
    this.client = api.admin();
    install(api);
    this.ns = namespace(prefix);
    this.refusals = new Refusals(client, "system:serviceaccount:akri:jakri-controller");
  }

  /** The CRDs, namespace {@code akri} and the controller's RBAC, once per API server. */
  static void install(RealApiServer api) {
    synchronized (INSTALLED) {
      if (INSTALLED.contains(api)) {
        return;
      }
      api.installCrds(Crds.load());
      api.admin()
          .namespaces()
          .resource(
              new NamespaceBuilder()
                  .withNewMetadata()
                  .withName(CONTROLLER_NAMESPACE)
                  .endMetadata()
                  .build())
          .createOr(n -> n.update());
      try {
        api.apply(Files.readString(CONTROLLER_RBAC));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      INSTALLED.add(api);
    }
  }

  /** A new namespace {@code <prefix>-<n>} (with its default ServiceAccount). */
  String namespace(String prefix) {
    String name = api.namespace(prefix);
    namespaces.add(name);
    return name;
  }

  /** A namespace {@code <prefix>-<n>} without a default ServiceAccount (nothing creates one). */
  String namespaceWithoutServiceAccount(String prefix) {
    String name = prefix + "-" + Long.toHexString(System.nanoTime());
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
    namespaces.add(name);
    return name;
  }

  /** The controller's client configuration: ServiceAccount akri/jakri-controller's token. */
  Config controllerConfig() {
    return api.serviceAccountConfig(CONTROLLER_NAMESPACE, CONTROLLER_ACCOUNT);
  }

  /** A kubeconfig for the controller's ServiceAccount, for the packaged jar. */
  Path kubeconfig(Path file) throws IOException {
    return api.kubeconfig(controllerConfig(), file);
  }

  /** A new client as the controller, counted by {@code calls} and watched by {@link #refusals}. */
  KubernetesClient controllerClient(ApiCalls calls) {
    return new KubernetesClientBuilder()
        .withConfig(controllerConfig())
        .withHttpClientBuilderConsumer(
            h -> {
              h.addOrReplaceInterceptor("jakri-api-calls", calls.interceptor());
              h.addOrReplaceInterceptor("jakri-test-refusals", refusals.interceptor());
            })
        .build();
  }

  Running start(ControllerOptions options) throws Exception {
    return start(options, io.jakri.controller.objects.KindDiscovery.RECHECK);
  }

  /** {@link #start(ControllerOptions)}, looking for unserved instance-object kinds that often. */
  Running start(ControllerOptions options, Duration kindRecheck) throws Exception {
    ApiCalls calls = new ApiCalls();
    KubernetesClient own = controllerClient(calls);
    ExecutorService workers = Executors.newFixedThreadPool(options.workers());
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    Controller controller =
        new Controller(
            own,
            options,
            new io.jakri.controller.objects.KindDiscovery(
                own, options.instanceObjectResources(), kindRecheck),
            Clock.systemUTC(),
            workers,
            scheduler,
            RandomGenerator.getDefault());
    Running r = new Running(controller, own, calls, workers, scheduler);
    synchronized (closables) {
      closables.add(r);
    }
    controller.start(Duration.ofSeconds(60));
    return r;
  }

  Running start() throws Exception {
    return start(options());
  }

  /** Starts a controller over {@code only} (empty: every namespace); closed with the cluster. */
  AllNamespaces startAcrossNamespaces(List<String> only) throws Exception {
    KubernetesClient own = controllerClient(new ApiCalls());
    ExecutorService workers = Executors.newCachedThreadPool();
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    AllNamespaces controller =
        new AllNamespaces(
            own,
            options(),
            only,
            Clock.systemUTC(),
            workers,
            scheduler,
            RandomGenerator.getDefault());
    synchronized (closables) {
      closables.add(
          () -> {
            controller.close();
            workers.shutdownNow();
            scheduler.shutdownNow();
            own.close();
          });
    }
    controller.start(Duration.ofSeconds(60));
    return controller;
  }

  /** The test options in this cluster's namespace: fast retries. */
  ControllerOptions options() {
    return ControllerOptions.defaults(ns).withRetry(Duration.ofMillis(100), Duration.ofSeconds(2));
  }

  /**
   * Creates (or finds) Node {@code name} as the admin and sets its Ready condition through {@code
   * nodes/status} (a status sent with the Node itself is ignored); deleted by {@link #close}.
   */
  Node node(String name, boolean ready, Instant since) {
    nodes.add(name);
    if (client.nodes().withName(name).get() == null) {
      client
          .nodes()
          .resource(new NodeBuilder().withNewMetadata().withName(name).endMetadata().build())
          .create();
    }
    return client
        .nodes()
        .withName(name)
        .editStatus(
            n -> {
              n.setStatus(
                  new NodeStatusBuilder()
                      .addNewCondition()
                      .withType("Ready")
                      .withStatus(ready ? "True" : "False")
                      .withReason(ready ? "KubeletReady" : "KubeletNotReady")
                      .withLastHeartbeatTime(since.toString())
                      .withLastTransitionTime(since.toString())
                      .endCondition()
                      .build());
              return n;
            });
  }

  Node node(String name) {
    return node(name, true, Instant.now());
  }

  Configuration configuration(String yaml) {
    return configuration(ns, yaml);
  }

  /** Creates the Configuration in {@code namespace}, or updates its spec when it exists. */
  Configuration configuration(String namespace, String yaml) {
    Configuration c = client.getKubernetesSerialization().unmarshal(yaml, Configuration.class);
    c.getMetadata().setNamespace(namespace);
    var stored =
        client
            .resources(Configuration.class)
            .inNamespace(namespace)
            .withName(c.getMetadata().getName());
    Configuration existing = stored.get();
    if (existing == null) {
      return stored.create(c);
    }
    // A patch of the spec, not an update: the controller writes the status meanwhile, and an
    // update based on the version read here would then be refused with 409 Conflict.
    return stored.edit(
        current -> {
          current.setSpec(c.getSpec());
          return current;
        });
  }

  /** A stored Configuration of this cluster's namespace. */
  Configuration stored(String name) {
    return client.resources(Configuration.class).inNamespace(ns).withName(name).get();
  }

  /** A Configuration with a broker Pod spec and both Service specs. */
  Configuration podConfiguration(String name, String image) {
    return podConfiguration(ns, name, image);
  }

  /** A Configuration in {@code namespace} with a broker Pod spec and both Service specs. */
  Configuration podConfiguration(String namespace, String name, String image) {
    return configuration(
        namespace,
        """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: %s
        spec:
          discoveryHandler:
            name: simulated
          capacity: 2
          brokerSpec:
            brokerPodSpec:
              containers:
                - name: broker
                  image: %s
                  resources:
                    limits:
                      "{{PLACEHOLDER}}": "1"
          instanceServiceSpec:
            ports:
              - name: grpc
                port: 8083
                targetPort: 8083
          configurationServiceSpec:
            ports:
              - name: grpc
                port: 8083
                targetPort: 8083
        """
            .formatted(name, image));
  }

  /** Creates an Instance as an agent would: labelled, owned by its Configuration. */
  Instance instance(Configuration configuration, String name, boolean shared, String... nodes) {
    String namespace = configuration.getMetadata().getNamespace();
    Instance i = new Instance();
    i.getMetadata().setName(name);
    i.getMetadata().setNamespace(namespace);
    i.getMetadata()
        .setLabels(Map.of("akri.sh/configuration", configuration.getMetadata().getName()));
    i.getMetadata()
        .setOwnerReferences(
            List.of(
                new OwnerReferenceBuilder()
                    .withApiVersion("akri.sh/v0")
                    .withKind("Configuration")
                    .withName(configuration.getMetadata().getName())
                    .withUid(configuration.getMetadata().getUid())
                    .build()));
    InstanceSpec spec = new InstanceSpec();
    spec.setConfigurationName(configuration.getMetadata().getName());
    // Required by the CRD (the mock took an Instance without it).
    spec.setCdiName(
        "akri.sh/"
            + configuration.getMetadata().getName()
            + "="
            + name.substring(name.lastIndexOf('-') + 1));
    spec.setShared(shared);
    spec.setCapacity(2);
    spec.setNodes(new ArrayList<>(List.of(nodes)));
    Map<String, String> usage = new LinkedHashMap<>();
    usage.put(name + "-0", "");
    usage.put(name + "-1", "");
    spec.setDeviceUsage(usage);
    i.setSpec(spec);
    return client.resource(i).inNamespace(namespace).create();
  }

  /** Sets a Pod's {@code status.phase} through the status subresource, as a kubelet would. */
  void podPhase(String pod, String phase) {
    client
        .pods()
        .inNamespace(ns)
        .withName(pod)
        .editStatus(
            p -> {
              p.getStatus().setPhase(phase);
              return p;
            });
  }

  /** Deletes Instance {@code name} of this cluster's namespace (as its agent would). */
  void deleteInstance(String name) {
    client.resources(Instance.class).inNamespace(ns).withName(name).delete();
  }

  /**
   * Stops the controllers, empties the namespaces they served (Configurations, Instances and the
   * managed objects) and deletes the Nodes made here; then fails if RBAC refused any request.
   */
  @Override
  public void close() {
    synchronized (closables) {
      for (AutoCloseable c : closables) {
        try {
          c.close();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
    }
    for (String namespace : namespaces) {
      client.resources(Instance.class).inNamespace(namespace).delete();
      client.resources(Configuration.class).inNamespace(namespace).delete();
      client
          .pods()
          .inNamespace(namespace)
          .withLabel(BrokerLabels.MANAGED_BY, BrokerLabels.CONTROLLER)
          .delete();
      client
          .batch()
          .v1()
          .jobs()
          .inNamespace(namespace)
          .withLabel(BrokerLabels.MANAGED_BY, BrokerLabels.CONTROLLER)
          .delete();
      client
          .services()
          .inNamespace(namespace)
          .withLabel(BrokerLabels.MANAGED_BY, BrokerLabels.CONTROLLER)
          .delete();
    }
    nodes.forEach(n -> client.nodes().withName(n).delete());
    refusals.assertNoneByRbac();
  }
}
