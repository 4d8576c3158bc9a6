package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.jakri.agent.Agent;
import io.jakri.crd.Instance;
import io.jakri.kubelet.v1beta1.AllocateRequest;
import io.jakri.kubelet.v1beta1.DevicePluginGrpc;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What cluster mode costs the API server: requests per discovered device and per Allocate, and
 * Allocate latency next to its floor (one GET + one PUT of the same Instance with a client). Prints
 * the figures; asserts only that the cost per event is constant.
 *
 * <p>Mock on purpose: it counts the HTTP requests the server received, which only the mock records.
 */
@EnableKubernetesMockClient(crud = true)
class ClusterCostIT {

  static final int DEVICES = 50;
  static final int ALLOCATES = 200;

  KubernetesMockServer server;
  KubernetesClient client;
  @TempDir Path tmp;
  ClusterHarness cluster;

  @BeforeEach
  void setUp() {
    cluster = new ClusterHarness(server, client, tmp);
  }

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  @Test
  void eachDiscoveredDeviceCostsOneWritePerNodeThatSeesIt() throws Exception {
    Agent n1 = cluster.start("n1", Duration.ofSeconds(60));
    Agent n2 = cluster.start("n2", Duration.ofSeconds(60));
    await().atMost(Duration.ofSeconds(20)).until(cluster.agent("n1")::clusterSynced);
    await().atMost(Duration.ofSeconds(20)).until(cluster.agent("n2")::clusterSynced);
    Map<ApiCalls.Verb, Long> before1 = n1.apiCalls().orElseThrow().snapshot();
    Map<ApiCalls.Verb, Long> before2 = n2.apiCalls().orElseThrow().snapshot();
    StringBuilder devices =
        new StringBuilder("deviceMapping:\n  - hosts: [n1, n2]\n    devices:\n");
    for (int i = 0; i < DEVICES; i++) {
      devices
          .append("      - resourceName: example.com/probe\n        instanceID: \"")
          .append(i)
          .append("\"\n");
    }
    cluster.apply(ClusterHarness.configuration("probes", "static", 1, devices.toString()));

    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                cluster.instances().size() == DEVICES
                    && cluster.instances().stream()
                        .allMatch(i -> i.getSpec().getNodes().size() == 2));
    Map<ApiCalls.Verb, Long> d1 = delta(before1, n1.apiCalls().orElseThrow().snapshot());
    Map<ApiCalls.Verb, Long> d2 = delta(before2, n2.apiCalls().orElseThrow().snapshot());
    long instanceWrites =
        d1.get(ApiCalls.Verb.CREATE)
            + d1.get(ApiCalls.Verb.UPDATE)
            + d2.get(ApiCalls.Verb.CREATE)
            + d2.get(ApiCalls.Verb.UPDATE);
    long reads = d1.get(ApiCalls.Verb.GET) + d2.get(ApiCalls.Verb.GET);
    System.out.printf(
        "COST per discovered device (2 nodes share %d devices): n1 %s, n2 %s;"
            + " Instance writes per device %.2f, conflict reads per device %.2f%n",
        DEVICES, d1, d2, instanceWrites / (double) DEVICES, reads / (double) DEVICES);
    // One create by the first node, one update by the second; a conflict (both create at once)
    // costs a read and one more write, never a loop.
    assertThat(instanceWrites).isBetween(2L * DEVICES, 3L * DEVICES);
    assertThat(reads).isLessThanOrEqualTo(DEVICES);
    assertThat(d1.get(ApiCalls.Verb.DELETE) + d2.get(ApiCalls.Verb.DELETE)).isZero();
  }

  @Test
  void allocateCostsOneInstanceWriteAndItsLatencyIsPrinted() throws Exception {
    Agent agent = cluster.start("n1", Duration.ofSeconds(60));
    cluster.apply(
        ClusterHarness.configuration(
            "scope",
            "static",
            1,
            "deviceMapping:\n  - hosts: [n1]\n    devices:\n"
                + "      - resourceName: example.com/scope\n        instanceID: \"7\"\n"));
    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.instances().size() == 1);
    String name = cluster.instances().get(0).getMetadata().getName();
    String resource = "akri.sh/" + name;
    cluster.awaitAllocatable("n1", resource, 1);
    DevicePluginGrpc.DevicePluginBlockingStub stub = cluster.devicePlugin("n1", resource);
    AllocateRequest request = ClusterHarness.allocateRequest(name + "-0");

    List<Long> allocate = new ArrayList<>();
    List<Long> floor = new ArrayList<>();
    long calls = 0;
    long http = 0;
    for (int i = 0; i < ALLOCATES; i++) {
      cluster.freeAllSlots(name);
      long before = agent.apiCalls().orElseThrow().total();
      int httpBefore = server.getRequestCount();
      long start = System.nanoTime();
      stub.withDeadlineAfter(10, TimeUnit.SECONDS).allocate(request);
      allocate.add(System.nanoTime() - start);
      http += server.getRequestCount() - httpBefore;
      calls += agent.apiCalls().orElseThrow().total() - before;
      // The floor: what one read-modify-write of the same Instance costs with a client.
      start = System.nanoTime();
      Instance current =
          cluster
              .admin
              .resources(Instance.class)
              .inNamespace(ClusterHarness.NS)
              .withName(name)
              .get();
      current.getSpec().getDeviceUsage().put(name + "-0", "n1");
      cluster.admin.resource(current).update();
      floor.add(System.nanoTime() - start);
    }
    System.out.printf(
        "COST per Allocate (uncontended, mock API server): %.2f API requests (%.2f HTTP requests"
            + " seen by the server);"
            + " Allocate p50 %.2f ms p99 %.2f ms; floor GET+PUT p50 %.2f ms p99 %.2f ms%n",
        calls / (double) ALLOCATES,
        http / (double) ALLOCATES,
        percentile(allocate, 50),
        percentile(allocate, 99),
        percentile(floor, 50),
        percentile(floor, 99));
    assertThat(calls).isBetween((long) ALLOCATES, 2L * ALLOCATES);
  }

  private static Map<ApiCalls.Verb, Long> delta(
      Map<ApiCalls.Verb, Long> before, Map<ApiCalls.Verb, Long> after) {
    Map<ApiCalls.Verb, Long> d = new LinkedHashMap<>();
    after.forEach((v, n) -> d.put(v, n - before.getOrDefault(v, 0L)));
    return d;
  }

  private static double percentile(List<Long> nanos, int p) {
    List<Long> sorted = new ArrayList<>(nanos);
    Collections.sort(sorted);
    return sorted.get(Math.min(sorted.size() - 1, sorted.size() * p / 100)) / 1e6;
  }
}
