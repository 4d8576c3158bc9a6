package io.jakri.controller;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.jakri.crd.Configuration;
import io.jakri.crd.Crds;
import io.jakri.crd.Instance;
import io.jakri.crd.InstanceSpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;

/**
 * A fabric8 mock API server in CRUD mode with the jakri CRDs, a client for the test (not counted)
 * and controllers started against it, each with its own counted client. {@link #rejectPosts} makes
 * the server refuse matching creates with 422 and a field cause, the way a real API server refuses
 * an invalid Pod (the mock validates nothing).
 */
final class MockCluster implements AutoCloseable {

  static final String NS = "test";

  final KubernetesMockServer server;
  final KubernetesClient client;
  private volatile Predicate<RecordedRequest> reject = r -> false;
  private volatile String rejectField = "";
  private final List<Running> running = new ArrayList<>();
  private final List<Runnable> closables = new ArrayList<>();

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

  MockCluster() {
    Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    KubernetesMixedDispatcher mixed = new KubernetesMixedDispatcher(responses);
    Dispatcher dispatcher =
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) {
            if ("POST".equals(request.getMethod()) && reject.test(request)) {
              return invalid(rejectField);
            }
            return mixed.dispatch(request);
          }
        };
    server =
        new KubernetesMockServer(new Context(), new MockWebServer(), responses, dispatcher, false);
    server.init();
    client = server.createClient();
    for (CustomResourceDefinition crd : Crds.load()) {
      client.apiextensions().v1().customResourceDefinitions().resource(crd).create();
    }
  }

  /** The request body without consuming it (the CRUD dispatcher reads it afterwards). */
  static String body(RecordedRequest request) {
    return new String(request.getBody().getBytes(), java.nio.charset.StandardCharsets.UTF_8);
  }

  /** From now on, POSTs matching {@code which} get 422 Invalid with a cause on {@code field}. */
  void rejectPosts(Predicate<RecordedRequest> which, String field) {
    rejectField = field;
    reject = which;
  }

  private MockResponse invalid(String field) {
    Status status =
        new StatusBuilder()
            .withApiVersion("v1")
            .withKind("Status")
            .withStatus("Failure")
            .withCode(422)
            .withReason("Invalid")
            .withMessage("Pod is invalid: " + field + ": Required value")
            .withNewDetails()
            .withKind("Pod")
            .addNewCause()
            .withField(field)
            .withReason("FieldValueRequired")
            .withMessage("Required value")
            .endCause()
            .endDetails()
            .build();
    return new MockResponse()
        .setResponseCode(422)
        .setHeader("Content-Type", "application/json")
        .setBody(client.getKubernetesSerialization().asJson(status));
  }

  Running start(ControllerOptions options) throws Exception {
    ApiCalls calls = new ApiCalls();
    KubernetesClient own =
        server.createClient(
            b ->
                b.withHttpClientBuilderConsumer(
                    h -> h.addOrReplaceInterceptor("jakri-api-calls", calls.interceptor())));
    ExecutorService workers = Executors.newFixedThreadPool(options.workers());
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    Controller controller =
        new Controller(
            own, options, Clock.systemUTC(), workers, scheduler, RandomGenerator.getDefault());
    Running r = new Running(controller, own, calls, workers, scheduler);
    synchronized (running) {
      running.add(r);
    }
    controller.start(Duration.ofSeconds(30));
    return r;
  }

  /** Starts a controller over {@code only} (empty: every namespace); closed with the cluster. */
  AllNamespaces startAcrossNamespaces(java.util.List<String> only) throws Exception {
    KubernetesClient own = server.createClient();
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
    controller.start(Duration.ofSeconds(30));
    return controller;
  }

  Running start() throws Exception {
    return start(options());
  }

  static ControllerOptions options() {
    return ControllerOptions.defaults(NS).withRetry(Duration.ofMillis(100), Duration.ofSeconds(2));
  }

  Node node(String name, boolean ready, Instant since) {
    Node node =
        new NodeBuilder()
            .withNewMetadata()
            .withName(name)
            .endMetadata()
            .withNewStatus()
            .addNewCondition()
            .withType("Ready")
            .withStatus(ready ? "True" : "False")
            .withLastTransitionTime(since.toString())
            .endCondition()
            .endStatus()
            .build();
    return client.nodes().resource(node).createOr(n -> n.update());
  }

  Node node(String name) {
    return node(name, true, Instant.now());
  }

  Configuration configuration(String yaml) {
    return configuration(NS, yaml);
  }

  Configuration configuration(String namespace, String yaml) {
    Configuration c = client.getKubernetesSerialization().unmarshal(yaml, Configuration.class);
    c.getMetadata().setNamespace(namespace);
    return client.resource(c).inNamespace(namespace).createOr(x -> x.update());
  }

  /** A Configuration with a broker Pod spec and both Service specs. */
  Configuration podConfiguration(String name, String image) {
    return podConfiguration(NS, name, image);
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
                new io.fabric8.kubernetes.api.model.OwnerReferenceBuilder()
                    .withApiVersion("akri.sh/v0")
                    .withKind("Configuration")
                    .withName(configuration.getMetadata().getName())
                    .withUid(configuration.getMetadata().getUid())
                    .build()));
    InstanceSpec spec = new InstanceSpec();
    spec.setConfigurationName(configuration.getMetadata().getName());
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

  @Override
  public void close() {
    synchronized (running) {
      running.forEach(Running::close);
    }
    synchronized (closables) {
      closables.forEach(Runnable::run);
    }
    client.close();
    server.destroy();
  }
}
