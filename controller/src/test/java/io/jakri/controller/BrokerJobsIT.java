package io.jakri.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.jakri.controller.broker.BrokerLabels;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** One broker Job per Instance, re-created for a new Configuration generation (real API server). */
@ExtendWith(RealKube.class)
class BrokerJobsIT {

  static final Duration WAIT = Duration.ofSeconds(20);

  RealCluster cluster;

  @BeforeEach
  void setUp(RealApiServer api) {
    cluster = new RealCluster(api, "jobs");
    cluster.node("n1");
    cluster.node("n2");
  }

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  Configuration jobConfiguration(String image) {
    return cluster.configuration(
        """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: scan
        spec:
          discoveryHandler:
            name: simulated
          brokerSpec:
            brokerJobSpec:
              backoffLimit: 2
              template:
                spec:
                  restartPolicy: Never
                  containers:
                    - name: scan
                      image: %s
                      resources:
                        limits:
                          "{{PLACEHOLDER}}": "1"
                        requests:
                          "{{PLACEHOLDER}}": "1"
        """
            .formatted(image));
  }

  List<Job> jobs() {
    return cluster.client.batch().v1().jobs().inNamespace(cluster.ns).list().getItems();
  }

  @Test
  void eachInstanceGetsOneOwnedJobEvenWhenShared() throws Exception {
    Configuration c = jobConfiguration("busybox:1");
    Instance i = cluster.instance(c, "scan-aaaaaa", true, "n1", "n2");
    cluster.instance(c, "scan-bbbbbb", false, "n2");
    cluster.start();

    await().atMost(WAIT).until(() -> jobs().size() == 2);
    Job job =
        jobs().stream()
            .filter(j -> j.getMetadata().getName().startsWith("scan-aaaaaa-"))
            .findFirst()
            .orElseThrow();
    long generation = c.getMetadata().getGeneration();
    assertThat(job.getMetadata().getName()).isEqualTo("scan-aaaaaa-" + generation + "-job");
    assertThat(job.getMetadata().getOwnerReferences().get(0).getUid())
        .isEqualTo(i.getMetadata().getUid());
    assertThat(job.getMetadata().getLabels())
        .containsEntry("app", "scan-aaaaaa-" + generation + "-job")
        .containsEntry("controller", "akri.sh")
        .containsEntry(BrokerLabels.INSTANCE, "scan-aaaaaa")
        .containsEntry(BrokerLabels.CONFIGURATION, "scan");
    assertThat(job.getSpec().getTemplate().getMetadata().getLabels())
        .containsEntry(BrokerLabels.INSTANCE, "scan-aaaaaa")
        .containsEntry(BrokerLabels.CONFIGURATION, "scan");
    assertThat(
            job.getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0)
                .getResources()
                .getRequests())
        .containsOnlyKeys("akri.sh/scan-aaaaaa");
    // An extended resource needs a limit: the real API server refuses a request without one
    // ("Limit must be set for non overcommitable resources"); the mock took it.
    // Jobs run where the scheduler puts them: no pinning.
    assertThat(job.getSpec().getTemplate().getSpec().getAffinity()).isNull();
  }

  @Test
  void aNewConfigurationGenerationReplacesTheJob() throws Exception {
    Configuration c = jobConfiguration("busybox:1");
    cluster.instance(c, "scan-aaaaaa", false, "n1");
    cluster.start();
    await().atMost(WAIT).until(() -> jobs().size() == 1);
    String first = jobs().get(0).getMetadata().getName();

    Configuration edited = jobConfiguration("busybox:2");
    assertThat(edited.getMetadata().getGeneration()).isGreaterThan(c.getMetadata().getGeneration());

    await()
        .atMost(WAIT)
        .until(
            () ->
                jobs().size() == 1
                    && !jobs().get(0).getMetadata().getName().equals(first)
                    && jobs()
                        .get(0)
                        .getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .get(0)
                        .getImage()
                        .equals("busybox:2"));
  }

  @Test
  void aDeletedInstanceTakesItsJobWithIt() throws Exception {
    Configuration c = jobConfiguration("busybox:1");
    cluster.instance(c, "scan-aaaaaa", false, "n1");
    cluster.start();
    await().atMost(WAIT).until(() -> jobs().size() == 1);

    cluster
        .client
        .resources(Instance.class)
        .inNamespace(cluster.ns)
        .withName("scan-aaaaaa")
        .delete();

    await().atMost(WAIT).until(() -> jobs().isEmpty());
  }
}
