package io.jakri.agent.dra;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link PoolWriter} against an API server (fabric8's, in CRUD mode).
 *
 * <p>Mock on purpose: resource.k8s.io/v1 (DRA) exists from Kubernetes 1.34; the real API server of
 * the tests is 1.26.
 */
@EnableKubernetesMockClient(crud = true)
class PoolWriterIT {

  static final String NODE = "writer-node";
  static final String POOL = DraNames.pool(NODE, "cfg");

  KubernetesClient client;

  List<ResourceSlice> slices() {
    return client.resources(ResourceSlice.class).list().getItems().stream()
        .sorted(Comparator.comparing(s -> s.getMetadata().getName()))
        .toList();
  }

  @Test
  void aPoolIsWrittenOnceEachChangeWithTheNextGenerationAndDeletedWhenEmpty() {
    PoolWriter writer = new PoolWriter(client, NODE);
    int max = ResourceSlicePublisher.MAX_DEVICES_PER_SLICE;

    writer.write("cfg", POOL, false, null, SlicesTest.devices(max + 1, List.of()));
    assertThat(slices()).hasSize(2).allMatch(s -> s.getSpec().getPool().getGeneration() == 1);
    assertThat(client.resources(DeviceClass.class).withName(DraNames.deviceClass("cfg")).get())
        .isNotNull();
    assertThat(writer.writes()).isEqualTo(3); // two slices, one DeviceClass
    assertThat(writer.published(POOL).slices()).isEqualTo(2);

    // unchanged: nothing written
    writer.write(
        "cfg", POOL, false, writer.published(POOL), SlicesTest.devices(max + 1, List.of()));
    assertThat(writer.writes()).isEqualTo(3);

    // fewer devices: one slice of the next generation, the other deleted
    writer.write("cfg", POOL, false, writer.published(POOL), SlicesTest.devices(3, List.of()));
    assertThat(slices())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.getMetadata().getName()).isEqualTo(DraNames.slice(POOL, 0));
              assertThat(s.getSpec().getPool().getGeneration()).isEqualTo(2L);
              assertThat(s.getSpec().getPool().getResourceSliceCount()).isEqualTo(1L);
              assertThat(s.getSpec().getDevices()).hasSize(3);
            });
    assertThat(writer.writes()).isEqualTo(5); // the DeviceClass is known

    writer.write("cfg", POOL, false, writer.published(POOL), List.of());
    assertThat(slices()).isEmpty();
    assertThat(writer.published(POOL)).isNull();
  }

  @Test
  void aPoolOfUnknownContentIsRewrittenAfterItsGenerationAndItsExtraSlicesDeleted() {
    PoolWriter previous = new PoolWriter(client, NODE);
    previous.write("cfg", POOL, false, null, SlicesTest.devices(300, List.of()));
    assertThat(slices()).hasSize(3);

    PoolWriter writer = new PoolWriter(client, NODE);
    writer.learn(POOL, PoolWriter.Pool.unknown("cfg", 4, false));
    writer.write("cfg", POOL, false, writer.published(POOL), SlicesTest.devices(1, List.of()));

    assertThat(slices())
        .singleElement()
        .satisfies(s -> assertThat(s.getSpec().getPool().getGeneration()).isEqualTo(5L));
    assertThat(writer.published()).containsOnlyKeys(POOL);
  }

  @Test
  void ourSlicesAreThisNodesAndAPoolsAreItsWhoeverWroteThem() {
    PoolWriter writer = new PoolWriter(client, NODE);
    PoolWriter other = new PoolWriter(client, "other-node");
    String shared = DraNames.sharedPool("cfg");
    writer.write("cfg", POOL, false, null, SlicesTest.devices(1, List.of()));
    other.write("cfg", shared, true, null, SlicesTest.devices(1, List.of("other-node")));

    assertThat(writer.ours())
        .extracting(s -> s.getSpec().getPool().getName())
        .containsExactly(POOL);
    assertThat(writer.poolSlices(shared)).hasSize(1);
    assertThat(writer.all()).hasSize(2);

    writer.deletePool(POOL);
    writer.forget(shared);
    assertThat(writer.all())
        .extracting(s -> s.getSpec().getPool().getName())
        .containsExactly(shared);
    assertThat(writer.published()).isEmpty();
  }
}
