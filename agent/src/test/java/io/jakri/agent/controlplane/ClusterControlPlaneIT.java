package io.jakri.agent.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.jakri.agent.cluster.ConfigurationWatcher;
import io.jakri.agent.cluster.EventRecorder;
import io.jakri.agent.cluster.KubernetesInstanceStore;
import io.jakri.agent.cluster.KubernetesPropertyResolver;
import io.jakri.agent.cluster.WatchedNamespaces;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ClusterControlPlane} on its own against fabric8's mock API server: what it supplies before
 * it is attached to a node (the wiring itself runs in every cluster-mode agent IT).
 *
 * <p>Mock on purpose: nothing is written; the wiring on the real server runs in every cluster-mode
 * agent IT.
 */
@EnableKubernetesMockClient(crud = true, https = false)
class ClusterControlPlaneIT {

  KubernetesClient client;

  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  @Test
  void suppliesTheApiServersStorePropertiesEventsAndWatch() {
    ClusterControlPlane mode =
        new ClusterControlPlane(
            client, "node-a", WatchedNamespaces.of("ns1"), true, Duration.ofSeconds(1), scheduler);
    try {
      assertThat(mode.describe()).isEqualTo("cluster mode, namespace(s) ns1");
      assertThat(mode.store()).isInstanceOf(KubernetesInstanceStore.class);
      assertThat(mode.properties()).isInstanceOf(KubernetesPropertyResolver.class);
      assertThat(mode.events()).isInstanceOf(EventRecorder.class);
      assertThat(mode.configurations()).isInstanceOf(ConfigurationWatcher.class);
      assertThat(mode.apiCalls()).isPresent();
      // Nothing listed yet: not synced, and an unknown Instance's Events go to the fallback.
      assertThat(mode.synced()).isFalse();
      assertThat(mode.instanceNamespace("unknown")).isEqualTo(ControlPlane.FALLBACK_NAMESPACE);
      assertThat(mode.instanceUid("unknown")).isEmpty();
    } finally {
      mode.stop();
      mode.close();
    }
  }
}
