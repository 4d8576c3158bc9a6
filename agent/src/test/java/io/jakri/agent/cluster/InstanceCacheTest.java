package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.crd.SlotUsage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The agent's view of the Instances, fed with resources as the watch and the writes deliver. */
class InstanceCacheTest {

  private final List<String> heard = new ArrayList<>();
  private InstanceCache cache;

  @BeforeEach
  void setUp() {
    // Configuration x lives in namespace jakri; this agent runs on node n2.
    cache =
        new InstanceCache(
            "n2",
            c -> c.equals("x") ? Optional.of("jakri") : Optional.empty(),
            new DeletedClaims());
    cache.addListener(
        new InstanceStore.Listener() {
          @Override
          public void changed(Instance instance) {
            heard.add("changed " + instance.name() + "@" + instance.version());
          }

          @Override
          public void deleted(String name) {
            heard.add("deleted " + name);
          }
        });
  }

  /** A resource of Instance x-aaaaaa (capacity 2) of Configuration x at {@code version}. */
  private static io.jakri.crd.Instance resource(
      String namespace, String uid, long version, List<String> nodes, Map<String, String> usage) {
    return InstanceResourceFixture.resource(namespace, uid, version, nodes, usage, null);
  }

  private static final Map<String, String> HELD_BY_N1 = Map.of("x-aaaaaa-0", "n1");
  private static final Map<String, String> FREE = Map.of("x-aaaaaa-0", "");

  @Test
  void aNewerVersionReplacesTheCachedOneAndListenersHearOnlyChangesOfContent() {
    Instance first = cache.offer(resource("jakri", "u1", 10, List.of("n1"), HELD_BY_N1));
    // The watch's echo of the same version, and an older one arriving late: ignored.
    assertThat(cache.offer(resource("jakri", "u1", 10, List.of("n1"), FREE))).isSameAs(first);
    assertThat(cache.offer(resource("jakri", "u1", 9, List.of(), FREE))).isSameAs(first);
    // A newer version with the same content is cached without telling anyone.
    cache.offer(resource("jakri", "u1", 11, List.of("n1"), HELD_BY_N1));
    cache.offer(resource("jakri", "u1", 12, List.of("n1", "n2"), HELD_BY_N1));

    assertThat(cache.get("x-aaaaaa").value().version()).isEqualTo(12);
    assertThat(cache.list()).extracting(Instance::version).containsExactly(12L);
    assertThat(heard).containsExactly("changed x-aaaaaa@10", "changed x-aaaaaa@12");
  }

  @Test
  void anInstanceOutsideItsConfigurationsNamespaceIsNotCached() {
    io.jakri.crd.Instance shadowed = resource("other", "u1", 10, List.of("n1"), HELD_BY_N1);
    assertThat(cache.ours(shadowed)).isFalse();

    Instance read = cache.offer(shadowed);

    assertThat(read.deviceUsage().get("x-aaaaaa-0")).isEqualTo(new SlotUsage.NodeUse("n1"));
    assertThat(cache.get("x-aaaaaa")).isNull();
    assertThat(cache.list()).isEmpty();
    assertThat(heard).isEmpty();
    // A Configuration not known here says nothing against any namespace.
    io.jakri.crd.Instance unknown = resource("other", "u1", 10, List.of(), FREE);
    unknown.getSpec().setConfigurationName("y");
    assertThat(cache.ours(unknown)).isTrue();
  }

  @Test
  void aDeletionOnlyDropsVersionsUpToTheDeletedOne() {
    cache.offer(resource("jakri", "u1", 10, List.of("n1"), HELD_BY_N1));

    cache.forget("x-aaaaaa", 9, true);
    assertThat(cache.get("x-aaaaaa")).isNotNull();
    cache.forget("x-aaaaaa", 10, true);
    assertThat(cache.get("x-aaaaaa")).isNull();
    cache.forget("x-aaaaaa", 10, true);

    assertThat(heard).containsExactly("changed x-aaaaaa@10", "deleted x-aaaaaa");
  }

  @Test
  void anInstanceDeletedBySomeoneElseComesBackWithItsClaimsAndItsNextStateKeepsThemHeld() {
    cache.offer(resource("jakri", "u1", 10, List.of("n1", "n2"), HELD_BY_N1));
    cache.forget("x-aaaaaa", 10, true);

    // This agent writes it again: n1's claim is restored.
    Instance again = cache.restore(Instance.create("x-aaaaaa", "x", 2, false, "n2", Map.of()));
    assertThat(again.deviceUsage().get("x-aaaaaa-0")).isEqualTo(new SlotUsage.NodeUse("n1"));
    assertThat(again.nodes()).containsExactly("n1", "n2");

    // Someone else wrote it again first, without the claim: the view keeps n1's slot held.
    Instance seen = cache.offer(resource("jakri", "u2", 15, List.of("n2"), FREE));
    assertThat(seen.deviceUsage().get("x-aaaaaa-0")).isEqualTo(new SlotUsage.NodeUse("n1"));
    assertThat(cache.get("x-aaaaaa").guards()).containsKey("x-aaaaaa-0");
    // The deleted state served once: it is not restored a second time.
    Instance later = Instance.create("x-aaaaaa", "x", 2, false, "n2", Map.of());
    assertThat(cache.restore(later)).isSameAs(later);
  }

  @Test
  void thisAgentsOwnDeleteLeavesNothingToRestore() {
    cache.offer(resource("jakri", "u1", 10, List.of("n1", "n2"), HELD_BY_N1));
    cache.forget("x-aaaaaa", 10, false);

    Instance again = Instance.create("x-aaaaaa", "x", 2, false, "n2", Map.of());
    assertThat(cache.restore(again)).isSameAs(again);
    assertThat(
            cache
                .offer(resource("jakri", "u2", 15, List.of("n2"), FREE))
                .deviceUsage()
                .get("x-aaaaaa-0"))
        .isEqualTo(SlotUsage.Free.INSTANCE);
  }
}
