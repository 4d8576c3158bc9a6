package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.StatusRuntimeException;
import io.jakri.kubelet.v1beta1.DevicePluginGrpc;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Five agents share one Instance of capacity 3 and each gets 50 concurrent Allocates for its slots,
 * 100 times over: every slot is granted to exactly one node, never more than capacity in total, and
 * the Instance's deviceUsage says exactly who won. Prints Allocate latency and API requests per
 * Allocate.
 */
@ExtendWith(RealKube.class)
class ClusterContentionIT {

  static final int AGENTS = 5;
  static final int ALLOCATES_PER_AGENT = 50;
  static final int CAPACITY = 3;
  static final int REPETITIONS = Integer.getInteger("jakri.contention.reps", 100);

  KubernetesClient client;
  @TempDir Path tmp;
  ClusterHarness cluster;

  @BeforeEach
  void setUp(RealApiServer api) {
    cluster = new ClusterHarness(new RealApiPeer(api, "cluster-contention"), tmp);
    client = cluster.admin;
  }

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  @Test
  void concurrentAllocatesOnEveryNodeNeverOverAllocateASharedInstance() throws Exception {
    List<String> nodes = new ArrayList<>();
    for (int n = 1; n <= AGENTS; n++) {
      nodes.add("node" + n);
      cluster.start("node" + n, Duration.ofSeconds(60));
    }
    cluster.apply(
        ClusterHarness.configuration(
            "contended",
            "static",
            CAPACITY,
            "deviceMapping:\n  - hosts: ["
                + String.join(", ", nodes)
                + "]\n    devices:\n      - resourceName: example.com/scope\n"
                + "        instanceID: \"42\"\n"));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                cluster.instances().size() == 1
                    && cluster.instances().get(0).getSpec().getNodes().size() == AGENTS);
    String instance = cluster.instances().get(0).getMetadata().getName();
    String resource = "akri.sh/" + instance;
    Map<String, DevicePluginGrpc.DevicePluginBlockingStub> stubs = new TreeMap<>();
    for (String node : nodes) {
      cluster.awaitAllocatable(node, resource, CAPACITY);
      stubs.put(node, cluster.devicePlugin(node, resource));
    }

    ExecutorService callers = Executors.newFixedThreadPool(AGENTS * ALLOCATES_PER_AGENT);
    List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
    long callsBefore = apiWrites();
    int totalGrants = 0;
    try {
      for (int rep = 0; rep < REPETITIONS; rep++) {
        cluster.freeAllSlots(instance);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Grant>> futures = new ArrayList<>();
        for (String node : nodes) {
          for (int k = 0; k < ALLOCATES_PER_AGENT; k++) {
            String slot = instance + "-" + ((k + rep) % CAPACITY);
            DevicePluginGrpc.DevicePluginBlockingStub stub = stubs.get(node);
            futures.add(
                callers.submit(
                    () -> {
                      go.await();
                      long start = System.nanoTime();
                      try {
                        stub.withDeadlineAfter(30, TimeUnit.SECONDS)
                            .allocate(ClusterHarness.allocateRequest(slot));
                        return new Grant(node, slot, true);
                      } catch (StatusRuntimeException e) {
                        return new Grant(node, slot, false);
                      } finally {
                        latencies.add(System.nanoTime() - start);
                      }
                    }));
          }
        }
        go.countDown();
        Map<String, Set<String>> winners = new TreeMap<>();
        for (Future<Grant> f : futures) {
          Grant g = f.get(60, TimeUnit.SECONDS);
          if (g.granted()) {
            winners.computeIfAbsent(g.slot(), s -> new TreeSet<>()).add(g.node());
          }
        }
        // Each slot went to exactly one node; all CAPACITY slots were granted, no more.
        assertThat(winners).as("repetition %d", rep).hasSize(CAPACITY);
        int repNo = rep;
        winners.forEach(
            (slot, who) -> assertThat(who).as("holders of %s in rep %d", slot, repNo).hasSize(1));
        Map<String, String> expected = new TreeMap<>();
        winners.forEach((slot, who) -> expected.put(slot, who.iterator().next()));
        assertThat(
                new TreeMap<>(cluster.instance(instance).orElseThrow().getSpec().getDeviceUsage()))
            .as("deviceUsage after rep %d", rep)
            .isEqualTo(expected);
        totalGrants += winners.size();
      }
    } finally {
      callers.shutdownNow();
    }
    assertThat(totalGrants).isEqualTo(REPETITIONS * CAPACITY);
    long allocates = (long) REPETITIONS * AGENTS * ALLOCATES_PER_AGENT;
    List<Long> sorted = new ArrayList<>(latencies);
    Collections.sort(sorted);
    System.out.printf(
        "CONTENTION %d agents x %d concurrent Allocates x %d reps on capacity %d: grants %d,"
            + " Allocate p50 %.2f ms p99 %.2f ms, API requests per Allocate %.3f%n",
        AGENTS,
        ALLOCATES_PER_AGENT,
        REPETITIONS,
        CAPACITY,
        totalGrants,
        sorted.get(sorted.size() / 2) / 1e6,
        sorted.get((int) (sorted.size() * 0.99)) / 1e6,
        (apiWrites() - callsBefore) / (double) allocates);
  }

  private record Grant(String node, String slot, boolean granted) {}

  private long apiWrites() {
    return cluster.nodes().stream()
        .mapToLong(n -> cluster.agent(n).apiCalls().orElseThrow().total())
        .sum();
  }
}
