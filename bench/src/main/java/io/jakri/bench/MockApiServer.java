package io.jakri.bench;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.jakri.crd.Crds;
import java.net.InetAddress;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The fabric8 mock API server in CRUD mode (plain HTTP on 127.0.0.1), in a JVM of its own so that
 * the agents and the bench client each reach it over TCP as they would a real API server. The jakri
 * CRDs are created in it first. Prints {@code MOCK_API_URL http://127.0.0.1:<port>} once serving,
 * then runs until killed. Usage: {@code MockApiServer}.
 *
 * <p>Besides the Kubernetes API it answers two bench paths (not counted): {@code GET
 * /bench/counts}, one line {@code <verb> <resource> <count>} per kind of request served so far
 * (verbs: get, list, watch, create, update, patch, delete; resources: the plural, with {@code
 * /status} for the subresource; requests of a client whose user agent starts with {@code
 * jakri-bench} are prefixed {@code bench:}), and {@code GET /bench/trace}, one line {@code
 * <user-agent> <method> <resource> <startNanos> <endNanos>} per request of the last 20,000, timed
 * with {@link System#nanoTime()} around the dispatch (CLOCK_MONOTONIC, comparable between processes
 * of one machine), so the bench can split an Allocate into before, in and after its API write.
 */
public final class MockApiServer {

  private MockApiServer() {}

  public static void main(String[] args) throws Exception {
    CountingDispatcher dispatcher = new CountingDispatcher();
    KubernetesMockServer server = serve(dispatcher);
    dispatcher.clearCounts();
    System.out.println("MOCK_API_URL http://127.0.0.1:" + server.getPort());
    System.out.flush();
    new CountDownLatch(1).await();
  }

  /** Starts the mock server in CRUD mode on 127.0.0.1 with the jakri CRDs created in it. */
  static KubernetesMockServer serve(KubernetesCrudDispatcher dispatcher) throws Exception {
    // fabric8's mock logs every request through java.util.logging.
    Logger.getLogger("").setLevel(Level.WARNING);
    Logger.getLogger("io.fabric8").setLevel(Level.SEVERE);
    KubernetesMockServer server =
        new KubernetesMockServer(
            new Context(), new MockWebServer(), new HashMap<>(), dispatcher, false);
    server.init(InetAddress.getByName("127.0.0.1"), 0);
    try (KubernetesClient admin = server.createClient()) {
      for (CustomResourceDefinition crd : Crds.load()) {
        admin.apiextensions().v1().customResourceDefinitions().resource(crd).create();
      }
    }
    return server;
  }

  /** A kubeconfig for a component to reach the mock server at {@code url} (namespace default). */
  static String kubeconfig(String url) {
    return "apiVersion: v1\nkind: Config\nclusters:\n- name: mock\n  cluster:\n    server: "
        + url
        + "\ncontexts:\n- name: mock\n  context:\n    cluster: mock\n    namespace: default"
        + "\n    user: bench\ncurrent-context: mock\nusers:\n- name: bench\n"
        + "  user:\n    token: bench\n";
  }

  /** The CRUD dispatcher, counting and timing every request it serves. Thread-safe. */
  static final class CountingDispatcher extends KubernetesCrudDispatcher {

    private static final int TRACE = 20_000;
    private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();
    private final ArrayDeque<String> trace = new ArrayDeque<>();

    CountingDispatcher() {
      super(List.of());
    }

    void clearCounts() {
      counts.clear();
      synchronized (trace) {
        trace.clear();
      }
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      String path = request.getPath();
      if (path.startsWith("/bench/counts")) {
        Map<String, Long> sorted = new TreeMap<>();
        counts.forEach((k, v) -> sorted.put(k, v.sum()));
        StringBuilder body = new StringBuilder();
        sorted.forEach((k, v) -> body.append(k).append(' ').append(v).append('\n'));
        return new MockResponse().setResponseCode(200).setBody(body.toString());
      }
      if (path.startsWith("/bench/trace")) {
        String body;
        synchronized (trace) {
          body = String.join("\n", trace) + "\n";
        }
        return new MockResponse().setResponseCode(200).setBody(body);
      }
      long start = System.nanoTime();
      MockResponse response = super.dispatch(request);
      long end = System.nanoTime();
      String kind = classify(request.getMethod(), path);
      String agent = String.valueOf(request.getHeader("User-Agent")).replace(' ', '_');
      String key = agent.startsWith("jakri-bench") ? "bench:" + kind : kind;
      counts.computeIfAbsent(key, k -> new LongAdder()).increment();
      String line = agent + " " + kind + " " + start + " " + end;
      synchronized (trace) {
        if (trace.size() >= TRACE) {
          trace.removeFirst();
        }
        trace.addLast(line);
      }
      return response;
    }

    /** {@code <verb> <resource>}, e.g. {@code update instances} or {@code watch nodes}. */
    static String classify(String method, String path) {
      int q = path.indexOf('?');
      String query = q < 0 ? "" : path.substring(q + 1);
      String[] parts = (q < 0 ? path : path.substring(0, q)).split("/");
      int at = -1;
      for (int i = 0; i < parts.length; i++) {
        if (parts[i].equals("namespaces") && i + 2 < parts.length) {
          at = i + 2;
          break;
        }
      }
      if (at < 0) {
        // Cluster-scoped: /api/v1/<plural>[/name] or /apis/<group>/<version>/<plural>[/name].
        at = parts.length > 1 && parts[1].equals("api") ? 3 : 4;
      }
      String resource = at < parts.length ? parts[at] : "other";
      boolean named = at + 1 < parts.length;
      if (at + 2 < parts.length) {
        resource += "/" + parts[at + 2];
      }
      String verb =
          switch (method) {
            case "GET" -> named ? "get" : query.contains("watch=true") ? "watch" : "list";
            case "POST" -> "create";
            case "PUT" -> "update";
            case "PATCH" -> "patch";
            case "DELETE" -> "delete";
            default -> method.toLowerCase(java.util.Locale.ROOT);
          };
      return verb + " " + resource;
    }
  }
}
