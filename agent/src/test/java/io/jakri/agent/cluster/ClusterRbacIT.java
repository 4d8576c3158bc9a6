package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.spi.ILoggingEvent;
import io.fabric8.kubernetes.api.model.Event;
import io.jakri.agent.LogCapture;
import io.jakri.crd.Configuration;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.Pod;
import io.jakri.kubelet.emulator.PodAdmission;
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
 * The agent's RBAC as shipped ({@code agent/rbac/agent-rbac.yaml}), proven on the real API server:
 * every agent runs on a token of ServiceAccount {@code default/jakri-agent} bound only by that
 * manifest, and each test drives a code path that writes (create and claim Instances, join a shared
 * one, status, Events, deletion). Any 403 the agent meets fails the test: the agent logs every
 * refused write, so the log is the witness.
 */
@ExtendWith(RealKube.class)
class ClusterRbacIT {

  static final String SHARED =
      ClusterHarness.configuration(
          "rbac-widgets",
          "static",
          2,
          """
          deviceMapping:
            - hosts: [n1, n2]
              devices:
                - resourceName: example.com/rbac-widget
                  instanceID: "0001"
                  env:
                    IP: 10.0.0.1
          """);

  @TempDir Path tmp;
  ClusterHarness cluster;
  LogCapture logs;

  @BeforeEach
  void setUp(RealApiServer api) {
    logs = LogCapture.root();
    cluster = new ClusterHarness(new RealApiPeer(api, "rbac"), tmp);
  }

  @AfterEach
  void tearDown() {
    cluster.close();
    try {
      assertThat(forbidden()).as("log lines about refused API calls").isEmpty();
    } finally {
      logs.close();
    }
  }

  @Test
  void allocateRecordsTheClaimAndASecondNodeJoinsTheSharedInstance() throws Exception {
    cluster.start("n1", Duration.ofSeconds(30));
    cluster.start("n2", Duration.ofSeconds(30));
    cluster.apply(SHARED);
    String shared = cluster.awaitOneInstanceOnNodes(2);
    cluster.awaitAllocatable("n1", "akri.sh/" + shared, 2);
    cluster.awaitAllocatable("n2", "akri.sh/" + shared, 2);

    PodAdmission onN1 =
        cluster
            .kubelet("n1")
            .admit(Pod.of(cluster.ns, "user-1", Container.of("app", "akri.sh/" + shared, 1)));
    PodAdmission onN2 =
        cluster
            .kubelet("n2")
            .admit(Pod.of(cluster.ns, "user-2", Container.of("app", "example.com/rbac-widget", 1)));

    String slot1 = onN1.containers().get("app").deviceIds().get("akri.sh/" + shared).get(0);
    String slot2 = onN2.containers().get("app").deviceIds().get("example.com/rbac-widget").get(0);
    assertThat(slot2).isNotEqualTo(slot1);
    assertThat(onN1.containers().get("app").envs()).containsValue("10.0.0.1");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(cluster.instance(shared).orElseThrow().getSpec().getDeviceUsage())
                    .containsEntry(slot1, "n1")
                    .containsEntry(slot2, "C:" + slot2 + ":n2"));
  }

  @Test
  void statusEventsAndDeletionAreWrittenWithTheAgentsOwnRights() throws Exception {
    cluster.start("n1", Duration.ofSeconds(30));
    cluster.apply(SHARED);
    cluster.apply(ClusterHarness.configuration("rbac-unknown", "no-such-handler", 1, "{}"));
    awaitInstances(1);
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              Configuration c = stored("rbac-widgets");
              assertThat(c.getStatus()).isNotNull();
              assertThat(c.getStatus().getNodes()).containsKey("n1");
              Configuration unknown = stored("rbac-unknown");
              // Awaited as assertions: a status not yet written is a failed attempt, not an NPE
              // that ends the wait (the agent writes the two Configurations' status in any order).
              assertThat(unknown.getStatus()).isNotNull();
              assertThat(unknown.getStatus().getNodes()).containsKey("n1");
              assertThat(events("rbac-unknown")).isNotEmpty();
            });

    cluster
        .admin
        .resources(Configuration.class)
        .inNamespace(cluster.ns)
        .withName("rbac-widgets")
        .delete();
    awaitInstances(0);
  }

  private void awaitInstances(int count) {
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(cluster.instances()).hasSize(count));
  }

  private Configuration stored(String name) {
    return cluster.storedConfiguration(name);
  }

  private List<Event> events(String involved) {
    return cluster.admin.v1().events().inNamespace(cluster.ns).list().getItems().stream()
        .filter(e -> involved.equals(e.getInvolvedObject().getName()))
        .toList();
  }

  private static final java.util.regex.Pattern HTTP_403 =
      java.util.regex.Pattern.compile("(?<![0-9])403(?![0-9])");

  private List<String> forbidden() {
    return logs.events().stream()
        .map(ILoggingEvent::getFormattedMessage)
        // 403 as a number of its own: a random temp directory name may contain the digits 403.
        .filter(m -> HTTP_403.matcher(m).find() || m.toLowerCase().contains("forbidden"))
        .toList();
  }
}
