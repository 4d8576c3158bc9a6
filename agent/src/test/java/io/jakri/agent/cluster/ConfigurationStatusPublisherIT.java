package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.jakri.agent.TestAgent;
import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.agent.instance.InMemoryInstanceStore;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.StoreException;
import io.jakri.crd.Configuration;
import io.jakri.crd.Crds;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Several nodes' status publishers writing one Configuration's status in the mock API server. */
@EnableKubernetesMockClient(crud = true)
class ConfigurationStatusPublisherIT {

  static final String NS = "default";
  static final int NODES = 3;
  static final int INSTANCES = 30;

  KubernetesMockServer server;
  KubernetesClient client;
  final List<AutoCloseable> closing = new ArrayList<>();
  final List<ConfigurationStatusPublisher> publishers = new ArrayList<>();
  final List<ApiCalls> calls = new ArrayList<>();
  final InMemoryInstanceStore instances = new InMemoryInstanceStore();

  @BeforeEach
  void setUp() {
    for (CustomResourceDefinition crd : Crds.load()) {
      client.apiextensions().v1().customResourceDefinitions().resource(crd).create();
    }
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
          new ConfigurationWatcher(client, NS, scheduler, specs -> self[0].changed());
      closing.add(watcher);
      ApiCalls counted = new ApiCalls();
      self[0] =
          new ConfigurationStatusPublisher(
              client,
              NS,
              "node" + n,
              watcher,
              () ->
                  Map.of(
                      "widgets",
                      new DiscoveryManager.ConfigurationStatus(
                          DiscoveryManager.State.DISCOVERING, "", 4)),
              instances,
              (k, reason, message) -> {},
              scheduler,
              Clock.systemUTC(),
              counted);
      closing.add(self[0]);
      publishers.add(self[0]);
      calls.add(counted);
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

  private Configuration stored() {
    return client.resources(Configuration.class).inNamespace(NS).withName("widgets").get();
  }

  @Test
  void aBurstOfNewInstancesCostsAFewStatusWritesInAllNotOnePerInstanceAndNode() throws Exception {
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                stored().getStatus() != null
                    && stored().getStatus().getNodes() != null
                    && stored().getStatus().getNodes().size() == NODES);
    long before = patches();

    // Instances appear one by one, one per 100 ms; every node is told after each.
    ScheduledExecutorService burst = Executors.newSingleThreadScheduledExecutor();
    closing.add(burst::shutdownNow);
    AtomicInteger created = new AtomicInteger();
    burst.scheduleAtFixedRate(
        () -> {
          int i = created.get();
          if (i < INSTANCES) {
            try {
              instances.create(
                  Instance.create("widgets-" + i, "widgets", 1, false, "node0", Map.of()));
            } catch (StoreException e) {
              throw new IllegalStateException(e);
            }
            created.incrementAndGet();
            publishers.forEach(ConfigurationStatusPublisher::changed);
          }
        },
        0,
        100,
        TimeUnit.MILLISECONDS);
    await().atMost(Duration.ofSeconds(30)).until(() -> created.get() == INSTANCES);

    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> Integer.valueOf(INSTANCES).equals(stored().getStatus().getInstances()));
    long written = patches() - before;
    System.out.printf(
        "STATUS %d nodes, %d Instances appearing: %d status patches%n", NODES, INSTANCES, written);
    // Before coalescing every node patched on each count change (~NODES x INSTANCES).
    assertThat(written).isLessThan(INSTANCES);
    // And then nobody writes any more: once the writes in flight have landed (no patch for 2 s),
    // none follows.
    java.util.concurrent.atomic.AtomicLong last = new java.util.concurrent.atomic.AtomicLong(-1);
    await()
        .pollInterval(Duration.ofMillis(200))
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(20))
        .until(() -> last.getAndSet(patches()) == patches());
    long settled = patches();
    await()
        .during(Duration.ofSeconds(4))
        .atMost(Duration.ofSeconds(6))
        .untilAsserted(() -> assertThat(patches()).isEqualTo(settled));
    assertThat(stored().getStatus().getInstances()).isEqualTo(INSTANCES);
    assertThat(stored().getStatus().getNodes()).hasSize(NODES);
  }
}
