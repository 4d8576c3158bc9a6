package io.jakri.agent.instance;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.crd.SlotUsage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class InstanceUpdatesTest {

  @Test
  void concurrentClaimsNeverGrantMoreSlotsThanCapacity() throws Exception {
    InMemoryInstanceStore store = new InMemoryInstanceStore();
    InstanceUpdates updates = new InstanceUpdates(store, new Random(1), 200, Duration.ofMillis(2));
    store.create(Instance.create("cam-abcdef", "cam", 3, true, "n0", Map.of()));
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<Boolean>> results = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      String node = "n" + (i % 5);
      Callable<Boolean> claimAny =
          () -> {
            try {
              updates.apply(
                  "cam-abcdef",
                  current -> {
                    Instance inst = current.orElseThrow();
                    Map<String, SlotUsage> usage = new LinkedHashMap<>(inst.deviceUsage());
                    String free =
                        usage.entrySet().stream()
                            .filter(e -> e.getValue() instanceof SlotUsage.Free)
                            .map(Map.Entry::getKey)
                            .findFirst()
                            .orElseThrow(() -> new IllegalStateException("full"));
                    usage.put(free, new SlotUsage.NodeUse(node));
                    return Optional.of(inst.withUsage(usage));
                  });
              return true;
            } catch (IllegalStateException full) {
              return false;
            }
          };
      results.add(pool.submit(claimAny));
    }
    int granted = 0;
    for (Future<Boolean> f : results) {
      granted += f.get() ? 1 : 0;
    }
    pool.shutdown();
    assertThat(granted).isEqualTo(3);
    assertThat(store.get("cam-abcdef").orElseThrow().deviceUsage().values())
        .noneMatch(u -> u instanceof SlotUsage.Free);
  }

  @Test
  void unchangedContentIsNotWrittenAgain() throws Exception {
    InMemoryInstanceStore store = new InMemoryInstanceStore();
    InstanceUpdates updates = new InstanceUpdates(store, new Random(1), 5, Duration.ofMillis(1));
    Instance stored = store.create(Instance.create("x-000001", "x", 1, false, "n", Map.of()));
    Optional<Instance> after = updates.apply("x-000001", c -> c);
    assertThat(after.orElseThrow().version()).isEqualTo(stored.version());
  }

  @Test
  void staleVersionIsAConflict() throws Exception {
    InMemoryInstanceStore store = new InMemoryInstanceStore();
    Instance stored = store.create(Instance.create("x-000001", "x", 1, false, "n", Map.of()));
    store.update(stored.withSpec(2, Map.of()));
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> store.update(stored.withSpec(3, Map.of())))
        .isInstanceOf(StoreException.Conflict.class);
  }
}
