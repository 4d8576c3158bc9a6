package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.grpc.StatusRuntimeException;
import io.jakri.crd.Instance;
import io.jakri.kubelet.v1beta1.DevicePluginGrpc;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two agents share one Instance and allocate its slots without pause while a tamperer deletes the
 * Instance, wipes its {@code deviceUsage}, replaces the object, swaps two slots' holders and names
 * forged holders (the other node, a node that does not exist), a bounded number of times in a
 * seeded order, each step waiting until both agents have seen it. No slot is ever released during
 * the storm (the reclaim grace outlasts it), so a slot whose Allocate was granted on both nodes is
 * a cross-node double grant: there must be none.
 */
@ExtendWith(RealKube.class)
class ForgedClaimsStormIT {

  static final List<String> NODES = List.of("n1", "n2");
  static final int CAPACITY = 4;
  static final int TAMPERINGS = Integer.getInteger("jakri.storm.tamperings", 30);

  KubernetesClient client;
  @TempDir Path tmp;
  ClusterHarness cluster;

  @AfterEach
  void tearDown() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void noSlotIsGrantedToTwoNodesWhileTheInstanceIsTamperedWith(RealApiServer api) throws Exception {
    cluster = new ClusterHarness(new RealApiPeer(api, "forged-claims"), tmp);
    client = cluster.admin;
    for (String node : NODES) {
      cluster.start(node, Duration.ofSeconds(60), Duration.ofMinutes(5));
    }
    cluster.apply(
        ClusterHarness.configuration(
            "storm",
            "static",
            CAPACITY,
            "deviceMapping:\n  - hosts: [n1, n2]\n    devices:\n"
                + "      - resourceName: example.com/storm\n        instanceID: \"7\"\n"));
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                cluster.instances().size() == 1
                    && cluster.instances().get(0).getSpec().getNodes().size() == NODES.size());
    String name = cluster.instances().get(0).getMetadata().getName();
    Map<String, DevicePluginGrpc.DevicePluginBlockingStub> stubs = new TreeMap<>();
    for (String node : NODES) {
      cluster.awaitAllocatable(node, "akri.sh/" + name, CAPACITY);
      stubs.put(node, cluster.devicePlugin(node, "akri.sh/" + name));
    }

    // slot -> the nodes whose Allocate granted it; nothing is released during the storm.
    Map<String, Set<String>> grantedTo = new ConcurrentHashMap<>();
    AtomicInteger grants = new AtomicInteger();
    AtomicInteger refusals = new AtomicInteger();
    AtomicBoolean storming = new AtomicBoolean(true);
    ExecutorService allocators = Executors.newFixedThreadPool(NODES.size());
    List<Future<?>> running = new ArrayList<>();
    for (String node : NODES) {
      DevicePluginGrpc.DevicePluginBlockingStub stub = stubs.get(node);
      running.add(
          allocators.submit(
              () -> {
                for (int k = 0; storming.get(); k++) {
                  String slot = name + "-" + (k % CAPACITY);
                  try {
                    stub.withDeadlineAfter(10, TimeUnit.SECONDS)
                        .allocate(ClusterHarness.allocateRequest(slot));
                    grantedTo.computeIfAbsent(slot, s -> ConcurrentHashMap.newKeySet()).add(node);
                    grants.incrementAndGet();
                  } catch (StatusRuntimeException refused) {
                    refusals.incrementAndGet();
                  }
                }
              }));
    }

    Random random = new Random(20261128);
    Map<String, Integer> done = new TreeMap<>();
    try {
      for (int i = 0; i < TAMPERINGS; i++) {
        String kind = tamper(name, i % 5, random);
        done.merge(kind, 1, Integer::sum);
        awaitSeenByBoth(name);
      }
    } finally {
      storming.set(false);
      for (Future<?> f : running) {
        f.get(30, TimeUnit.SECONDS);
      }
      allocators.shutdownNow();
    }

    Map<String, Set<String>> doubles = new TreeMap<>();
    grantedTo.forEach(
        (slot, nodes) -> {
          if (nodes.size() > 1) {
            doubles.put(slot, new TreeSet<>(nodes));
          }
        });
    System.out.printf(
        "STORM %d tamperings %s: %d grants, %d refusals, slots granted to two nodes: %d %s%n",
        TAMPERINGS, done, grants.get(), refusals.get(), doubles.size(), doubles);
    assertThat(grants.get()).as("grants during the storm").isPositive();
    assertThat(doubles).as("slots granted on two nodes").isEmpty();
  }

  /** One tampering of kind {@code kind}; returns its name. */
  private String tamper(String name, int kind, Random random) {
    int a = random.nextInt(CAPACITY);
    int b = (a + 1 + random.nextInt(CAPACITY - 1)) % CAPACITY;
    String slotA = name + "-" + a;
    String slotB = name + "-" + b;
    switch (kind) {
      case 0 -> {
        String forged = List.of("n1", "n2", "ghost").get(random.nextInt(3));
        edit(
            name,
            usage -> {
              usage.put(slotA, forged);
              return usage;
            });
        return "forged holder";
      }
      case 1 -> {
        edit(
            name,
            usage -> {
              String held = usage.getOrDefault(slotA, "");
              usage.put(slotA, usage.getOrDefault(slotB, ""));
              usage.put(slotB, held);
              return usage;
            });
        return "swap";
      }
      case 2 -> {
        edit(
            name,
            usage -> {
              usage.replaceAll((slot, holder) -> "");
              return usage;
            });
        return "wipe";
      }
      case 3 -> {
        replace(name, random);
        return "replace";
      }
      default -> {
        cluster.instance(name).ifPresent(i -> cluster.admin.resource(i).delete());
        // The agents write it again (with the claims it carried).
        await()
            .atMost(Duration.ofSeconds(10))
            .pollInterval(Duration.ofMillis(5))
            .until(() -> cluster.instance(name).isPresent());
        return "delete";
      }
    }
  }

  /** Rewrites the stored {@code deviceUsage}, retrying when an agent wrote in between. */
  private void edit(String name, UnaryOperator<Map<String, String>> change) {
    await()
        .atMost(Duration.ofSeconds(10))
        .ignoreExceptionsInstanceOf(KubernetesClientException.class)
        .until(
            () -> {
              Optional<Instance> current = cluster.instance(name);
              if (current.isEmpty()) {
                return false;
              }
              Instance i = current.get();
              i.getSpec().setDeviceUsage(change.apply(usageOf(i)));
              cluster.admin.resource(i).update();
              return true;
            });
  }

  /**
   * Deletes the Instance and creates a new object of that name at once, its {@code deviceUsage}
   * wiped but one slot naming a forged holder.
   */
  private void replace(String name, Random random) {
    Instance old = cluster.instance(name).orElseThrow();
    Map<String, String> usage = usageOf(old);
    usage.replaceAll((slot, holder) -> "");
    usage.put(name + "-" + random.nextInt(CAPACITY), random.nextBoolean() ? "n1" : "n2");
    Instance fresh = new Instance();
    fresh.setMetadata(
        new ObjectMetaBuilder()
            .withName(name)
            .withNamespace(cluster.ns)
            .withLabels(old.getMetadata().getLabels())
            .withOwnerReferences(old.getMetadata().getOwnerReferences())
            .build());
    fresh.setSpec(old.getSpec());
    fresh.getSpec().setDeviceUsage(usage);
    cluster.admin.resource(old).delete();
    await()
        .atMost(Duration.ofSeconds(10))
        .ignoreExceptionsInstanceOf(KubernetesClientException.class)
        .until(
            () -> {
              if (cluster.instance(name).isEmpty()) {
                cluster.admin.resource(fresh).create();
              }
              return true;
            });
  }

  private static Map<String, String> usageOf(Instance i) {
    return i.getSpec().getDeviceUsage() == null
        ? new LinkedHashMap<>()
        : new LinkedHashMap<>(i.getSpec().getDeviceUsage());
  }

  /** Waits until both agents' views are at least as new as the stored Instance. */
  private void awaitSeenByBoth(String name) {
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(5))
        .until(
            () -> {
              Optional<Instance> stored = cluster.instance(name);
              if (stored.isEmpty()) {
                return false;
              }
              long version = Long.parseLong(stored.get().getMetadata().getResourceVersion());
              for (String node : NODES) {
                Optional<io.jakri.agent.instance.Instance> seen =
                    cluster.agent(node).instances().get(name);
                if (seen.isEmpty() || seen.get().version() < version) {
                  return false;
                }
              }
              return true;
            });
  }
}
