package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.StoreException;
import io.jakri.crd.SlotUsage;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The store's writes against the fabric8 mock API server in CRUD mode.
 *
 * <p>Mock on purpose: it asserts the HTTP requests the server received (method and count), which
 * only the mock records.
 */
@EnableKubernetesMockClient(crud = true)
class KubernetesInstanceStoreIT {

  KubernetesMockServer server;
  KubernetesClient client;
  KubernetesInstanceStore store;
  ApiCalls calls;

  @BeforeEach
  void setUp() {
    calls = new ApiCalls();
    store = new KubernetesInstanceStore(client, "jakri", "n1", c -> Optional.empty(), calls);
  }

  @AfterEach
  void tearDown() {
    store.close();
  }

  private static Instance claimed(Instance instance, String slot, String node) {
    Map<String, SlotUsage> usage = new LinkedHashMap<>(instance.deviceUsage());
    usage.put(slot, new SlotUsage.NodeUse(node));
    return instance.withUsage(usage);
  }

  @Test
  void aClaimOnAStaleVersionIsRefusedAndTheCacheIsRefreshedForTheRetry() throws Exception {
    Instance created =
        store.create(Instance.create("cams-8120fe", "cams", 2, true, "n1", Map.of()));
    // Another agent claims slot 0 first.
    io.jakri.crd.Instance other =
        client
            .resources(io.jakri.crd.Instance.class)
            .inNamespace("jakri")
            .withName(created.name())
            .get();
    other.getSpec().getDeviceUsage().put("cams-8120fe-0", "n2");
    client.resources(io.jakri.crd.Instance.class).inNamespace("jakri").resource(other).update();

    assertThatThrownBy(() -> store.update(claimed(created, "cams-8120fe-0", "n1")))
        .isInstanceOf(StoreException.Conflict.class);

    Instance fresh = store.get(created.name()).orElseThrow();
    assertThat(fresh.version()).isGreaterThan(created.version());
    assertThat(fresh.deviceUsage().get("cams-8120fe-0")).isEqualTo(new SlotUsage.NodeUse("n2"));
    assertThat(server.getLastRequest().getMethod()).isEqualTo("GET");
  }

  @Test
  void aClaimOnTheCurrentVersionIsOnePatchThatTouchesOnlyItsSlot() throws Exception {
    Instance created =
        store.create(Instance.create("cams-8120fe", "cams", 2, true, "n1", Map.of("IP", "x")));
    int before = server.getRequestCount();

    Instance stored = store.update(claimed(created, "cams-8120fe-1", "n1"));

    assertThat(server.getRequestCount() - before).isEqualTo(1);
    assertThat(server.getLastRequest().getMethod()).isEqualTo("PATCH");
    assertThat(stored.version()).isGreaterThan(created.version());
    io.jakri.crd.Instance resource =
        client
            .resources(io.jakri.crd.Instance.class)
            .inNamespace("jakri")
            .withName(created.name())
            .get();
    assertThat(resource.getSpec().getDeviceUsage())
        .containsExactly(Map.entry("cams-8120fe-0", ""), Map.entry("cams-8120fe-1", "n1"));
    assertThat(resource.getSpec().getBrokerProperties()).containsEntry("IP", "x");
    assertThat(resource.getMetadata().getResourceVersion())
        .isEqualTo(Long.toString(stored.version()));
    assertThat(calls.get(ApiCalls.Verb.UPDATE)).isEqualTo(1);
  }

  @Test
  void theWatchKeepsTheNewestVersionWhenItsEchoOfOurWriteArrivesLate() throws Exception {
    store.start();
    await().atMost(Duration.ofSeconds(10)).until(store::synced);
    Instance created =
        store.create(Instance.create("cams-8120fe", "cams", 2, true, "n1", Map.of()));
    Instance first = store.update(claimed(created, "cams-8120fe-0", "n1"));
    Instance second = store.update(claimed(first, "cams-8120fe-1", "n1"));

    await()
        .pollDelay(Duration.ofMillis(200))
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(() -> assertThat(store.get(created.name())).contains(second));
  }
}
