package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.jakri.crd.Instance;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Configuration added while another one's thousands of devices are still being written to the API
 * server gets its Instance written after at most a batch of the big one's, not after all of them:
 * the agent takes Configurations in turn.
 */
@ExtendWith(RealKube.class)
class FairPublishingIT {

  static final int BIG = 1_000;

  KubernetesClient client;
  @TempDir Path tmp;
  ClusterHarness cluster;

  @BeforeEach
  void setUp(RealApiServer api) {
    cluster = new ClusterHarness(new RealApiPeer(api, "fair-publishing"), tmp);
    client = cluster.admin;
  }

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  @Test
  void aSmallConfigurationIsNotHeldBackByABigOneStillBeingWritten() throws Exception {
    cluster.start("n1", Duration.ofSeconds(30));
    cluster.apply(ClusterHarness.configuration("big", "simulated", 1, "count: " + BIG));
    await().atMost(Duration.ofSeconds(30)).until(() -> count("big") > 0);

    cluster.apply(ClusterHarness.configuration("small", "simulated", 1, "count: 1"));

    await().atMost(Duration.ofSeconds(60)).until(() -> count("small") == 1);
    long bigWhenSmallAppeared = count("big");
    assertThat(bigWhenSmallAppeared)
        .as("big's Instances written when small's appeared")
        .isLessThan(BIG);
    // And the big one goes on being written.
    await().atMost(Duration.ofSeconds(60)).until(() -> count("big") > bigWhenSmallAppeared);
  }

  private long count(String configuration) {
    List<Instance> all = cluster.instances();
    return all.stream()
        .filter(i -> configuration.equals(i.getSpec().getConfigurationName()))
        .count();
  }
}
