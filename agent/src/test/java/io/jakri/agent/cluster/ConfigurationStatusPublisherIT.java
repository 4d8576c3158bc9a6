package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.jakri.agent.TestAgent;
import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.crd.Configuration;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Several nodes' status publishers, each on the agent's own ServiceAccount token, writing one
 * Configuration's status in the real API server (through the status subresource): each writes only
 * its own {@code status.nodes} entry, never another node's nor the controller's fields.
 */
@ExtendWith(RealKube.class)
class ConfigurationStatusPublisherIT {

  String NS;
  static final int NODES = 3;
  static final int CHANGES = 30;

  KubernetesClient client;
  KubernetesClient agent;
  final List<AutoCloseable> closing = new ArrayList<>();
  final List<ConfigurationStatusPublisher> publishers = new ArrayList<>();
  final List<ApiCalls> calls = new ArrayList<>();
  final List<AtomicInteger> devices = new ArrayList<>();

  @BeforeEach
  void setUp(RealApiServer api) {
    RealApiPeer.installCrdsAndRbac(api);
    client = api.admin();
    agent = RealApiPeer.agentClient(api);
    NS = api.namespace("status-publisher");
    Configuration c =
        client
            .getKubernetesSerialization()
            .unmarshal(
                TestAgent.configuration("widgets", "static", 1, "deviceMapping: []\n"),
                Configuration.class);
    client.resources(Configuration.class).inNamespace(NS).resource(c).create();
    for (int n = 0; n < NODES; n++) {
      ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
      closing.add(scheduler::shutdownNow);
      ConfigurationStatusPublisher[] self = new ConfigurationStatusPublisher[1];
      ConfigurationWatcher watcher =
          new ConfigurationWatcher(agent, NS, scheduler, specs -> self[0].changed());
      closing.add(watcher);
      ApiCalls counted = new ApiCalls();
      AtomicInteger seen = new AtomicInteger(n + 1);
      self[0] =
          new ConfigurationStatusPublisher(
              agent,
              "node" + n,
              watcher,
              () ->
                  Map.of(
                      "widgets",
                      new DiscoveryManager.ConfigurationStatus(
                          DiscoveryManager.State.DISCOVERING, "", seen.get())),
              (k, reason, message) -> {},
              scheduler,
              Clock.systemUTC(),
              counted);
      closing.add(self[0]);
      publishers.add(self[0]);
      calls.add(counted);
      devices.add(seen);
      watcher.start();
    }
  }

  @AfterEach
  void tearDown() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  private long patches() {
    return calls.stream().mapToLong(c -> c.get(ApiCalls.Verb.PATCH)).sum();
  }

  private long[] perNode() {
    return calls.stream().mapToLong(c -> c.get(ApiCalls.Verb.PATCH)).toArray();
  }

  private Configuration stored() {
    return client.resources(Configuration.class).inNamespace(NS).withName("widgets").get();
  }

  private void awaitQuiet() {
    AtomicLong last = new AtomicLong(-1);
    await()
        .pollInterval(Duration.ofMillis(200))
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(20))
        .until(() -> last.getAndSet(patches()) == patches());
  }

  @Test
  void eachNodeWritesOnlyItsOwnEntryAndLeavesTheControllersFieldsAlone() {
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                stored().getStatus() != null
                    && stored().getStatus().getNodes() != null
                    && stored().getStatus().getNodes().size() == NODES);
    awaitQuiet();
    for (int n = 0; n < NODES; n++) {
      assertThat(stored().getStatus().getNodes().get("node" + n).getDevices()).isEqualTo(n + 1);
      // Once, or twice when another node's earlier write reached its watch after its own.
      assertThat(calls.get(n).get(ApiCalls.Verb.PATCH)).as("node%d's writes", n).isBetween(1L, 2L);
    }
    // What the controller writes.
    client
        .genericKubernetesResources("akri.sh/v0", "Configuration")
        .inNamespace(NS)
        .withName("widgets")
        .subresource("status")
        .patch(
            PatchContext.of(PatchType.JSON),
            "[{\"op\":\"add\",\"path\":\"/status/conditions\",\"value\":[{\"type\":\"Discovering\","
                + "\"status\":\"True\",\"reason\":\"Discovering\",\"message\":\"\","
                + "\"lastTransitionTime\":\"2026-11-21T10:00:00Z\"}]},"
                + "{\"op\":\"add\",\"path\":\"/status/instances\",\"value\":7}]");
    awaitQuiet();
    long[] before = perNode();

    devices.get(1).set(9);
    publishers.get(1).changed();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> stored().getStatus().getNodes().get("node1").getDevices() == 9);
    awaitQuiet();

    long[] after = perNode();
    assertThat(after[0] - before[0]).as("node0's writes").isZero();
    assertThat(after[1] - before[1]).as("node1's writes").isBetween(1L, 2L);
    assertThat(after[2] - before[2]).as("node2's writes").isZero();
    assertThat(stored().getStatus().getNodes().get("node0").getDevices()).isEqualTo(1);
    assertThat(stored().getStatus().getNodes().get("node2").getDevices()).isEqualTo(3);
    assertThat(stored().getStatus().getInstances()).isEqualTo(7);
    assertThat(stored().getStatus().getConditions())
        .singleElement()
        .satisfies(c -> assertThat(c.getLastTransitionTime()).isEqualTo("2026-11-21T10:00:00Z"));
  }

  @Test
  void aBurstOfChangesCostsAFewWritesNotOnePerChange() {
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                stored().getStatus() != null
                    && stored().getStatus().getNodes() != null
                    && stored().getStatus().getNodes().size() == NODES);
    awaitQuiet();
    long[] before = perNode();

    // node0 sees its device count change every 100 ms; it is told after each.
    ScheduledExecutorService burst = Executors.newSingleThreadScheduledExecutor();
    closing.add(burst::shutdownNow);
    AtomicInteger done = new AtomicInteger();
    burst.scheduleAtFixedRate(
        () -> {
          if (done.get() < CHANGES) {
            devices.get(0).incrementAndGet();
            done.incrementAndGet();
            publishers.get(0).changed();
          }
        },
        0,
        100,
        TimeUnit.MILLISECONDS);
    await().atMost(Duration.ofSeconds(30)).until(() -> done.get() == CHANGES);
    int last = 1 + CHANGES;
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> stored().getStatus().getNodes().get("node0").getDevices() == last);
    awaitQuiet();

    long[] after = perNode();
    long written = after[0] - before[0];
    System.out.printf(
        "STATUS %d changes on one node in 3 s: %d status patches%n", CHANGES, written);
    // About one pass per interval (1 s), and no other node writes.
    assertThat(written).isGreaterThan(0).isLessThanOrEqualTo(8);
    assertThat(after[1] - before[1]).isZero();
    assertThat(after[2] - before[2]).isZero();
  }
}
