package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.grpc.StatusRuntimeException;
import io.jakri.crd.Instance;
import io.jakri.crd.SlotUsage;
import io.jakri.kubelet.emulator.AdmissionException;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.Pod;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A device of capacity 1 seen by two nodes, its slot in use by a running pod on n1 (the kubelet
 * emulator's PodResources reports it), then the Instance object is lost: deleted, replaced with an
 * empty {@code deviceUsage}, its slot freed by hand, or its slot given by hand to n2 (a node that
 * never claimed it) or to a node that does not exist. Meanwhile n2 is asked, again and again, to
 * allocate that slot. n2 must refuse every time, n1's claim must come back into the object, and a
 * pod on n2 asking for the device must not be admitted.
 */
@ExtendWith(RealKube.class)
class ClaimsSurviveInstanceLossIT {

  KubernetesClient client;
  @TempDir Path tmp;
  ClusterHarness cluster;

  static final String SOLO =
      ClusterHarness.configuration(
          "solo",
          "static",
          1,
          """
          deviceMapping:
            - hosts: [n1, n2]
              devices:
                - resourceName: example.com/solo
                  instanceID: "1"
          """);

  /** Short, so that "not even after the reclaim grace" is checked within the test. */
  static final Duration RECLAIM_GRACE = Duration.ofMillis(500);

  String name;
  String slot;

  @BeforeEach
  void setUp(RealApiServer api) throws Exception {
    cluster = new ClusterHarness(new RealApiPeer(api, "claims-survive-insta"), tmp);
    client = cluster.admin;
    cluster.start("n1", Duration.ofSeconds(30), RECLAIM_GRACE);
    cluster.start("n2", Duration.ofSeconds(30), RECLAIM_GRACE);
    cluster.apply(SOLO);
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                cluster.instances().size() == 1
                    && cluster.instances().get(0).getSpec().getNodes().size() == 2);
    name = cluster.instances().get(0).getMetadata().getName();
    cluster.awaitAllocatable("n1", "akri.sh/" + name, 1);
    cluster.awaitAllocatable("n2", "akri.sh/" + name, 1);
    slot =
        cluster
            .kubelet("n1")
            .admit(Pod.of("default", "user", Container.of("app", "akri.sh/" + name, 1)))
            .container("app")
            .deviceIds("akri.sh/" + name)
            .get(0);
    assertThat(usage()).containsEntry(slot, "n1");
    cluster.awaitAllocatable("n2", "akri.sh/" + name, 0);
  }

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  @Test
  void deletedInstanceComesBackWithTheClaimOfTheRunningPod() {
    String uid = cluster.instance(name).orElseThrow().getMetadata().getUid();

    loseAndCheck(() -> cluster.admin.resource(cluster.instance(name).orElseThrow()).delete());

    assertThat(cluster.instance(name).orElseThrow().getMetadata().getUid()).isNotEqualTo(uid);
  }

  @Test
  void instanceReplacedWithAnEmptyDeviceUsageGetsTheClaimBack() {
    loseAndCheck(
        () -> {
          Instance current = cluster.instance(name).orElseThrow();
          current.getSpec().setDeviceUsage(new LinkedHashMap<>());
          cluster.admin.resource(current).update();
        });
  }

  @Test
  void slotFreedByHandWhileInUseIsClaimedAgainAndNotGrantedElsewhere() {
    loseAndCheck(() -> setSlot(""));
  }

  @Test
  void slotGivenToAnotherNodeByHandIsNotGrantedThereAndItsHolderWritesItBack() {
    loseAndCheck(() -> setSlot("n2"));
  }

  @Test
  void slotGivenToANodeThatDoesNotExistIsWrittenBackByItsHolder() {
    loseAndCheck(() -> setSlot("ghost"));
  }

  @Test
  void slotGivenToAnotherNodeByHandAndThenFreedIsNotGrantedThere() {
    loseAndCheck(
        () -> {
          long forged = Long.parseLong(setSlot("n2").getMetadata().getResourceVersion());
          // n2 has seen the forged holder (or n1's claim written back over it) before the free.
          await()
              .atMost(Duration.ofSeconds(10))
              .until(
                  () ->
                      cluster.agent("n2").instances().get(name).orElseThrow().version() >= forged);
          setSlot("");
        });
  }

  private Instance setSlot(String value) {
    return cluster
        .admin
        .resources(Instance.class)
        .inNamespace(cluster.ns)
        .withName(name)
        .patch(
            PatchContext.of(PatchType.JSON),
            "[{\"op\":\"replace\",\"path\":\"/spec/deviceUsage/"
                + slot
                + "\",\"value\":\""
                + value
                + "\"}]");
  }

  /**
   * Runs {@code loss}, then asks n2 to allocate the slot until the API server shows n1's claim
   * again and both agents have seen it and n1's reclaim grace has passed twice; no request may be
   * granted, and a pod on n2 is refused afterwards.
   */
  private void loseAndCheck(Runnable loss) {
    DevicePluginGrpc.DevicePluginBlockingStub n2 = cluster.devicePlugin("n2", "akri.sh/" + name);
    List<String> granted = new ArrayList<>();
    loss.run();
    long lostAt = System.nanoTime();
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(5))
        .until(
            () -> {
              try {
                n2.allocate(ClusterHarness.allocateRequest(slot));
                granted.add(slot + " granted on n2 while n1 runs a pod on it");
              } catch (StatusRuntimeException refused) {
                // expected: in use on n1, or the Instance is not there
              }
              return !granted.isEmpty()
                  || "n1".equals(usage().get(slot))
                      && seenHeldByN1("n1")
                      && seenHeldByN1("n2")
                      && System.nanoTime() - lostAt > 2 * RECLAIM_GRACE.toNanos();
            });
    assertThat(granted).isEmpty();
    assertThat(usage()).containsEntry(slot, "n1");
    cluster.awaitAllocatable("n2", "akri.sh/" + name, 0);
    assertThatThrownBy(
            () ->
                cluster
                    .kubelet("n2")
                    .admit(
                        Pod.of("default", "intruder", Container.of("app", "akri.sh/" + name, 1))))
        .isInstanceOf(AdmissionException.class);
    assertThat(usage()).containsEntry(slot, "n1");
  }

  private Map<String, String> usage() {
    Optional<Instance> i = cluster.instance(name);
    return i.isEmpty() || i.get().getSpec().getDeviceUsage() == null
        ? Map.of()
        : i.get().getSpec().getDeviceUsage();
  }

  private boolean seenHeldByN1(String node) throws Exception {
    return seenHeldBy(node, "n1");
  }

  /** Whether {@code node}'s agent sees the slot held by {@code holder} through its resource. */
  private boolean seenHeldBy(String node, String holder) throws Exception {
    return cluster
        .agent(node)
        .instances()
        .get(name)
        .map(i -> new SlotUsage.NodeUse(holder).equals(i.deviceUsage().get(slot)))
        .orElse(false);
  }
}
