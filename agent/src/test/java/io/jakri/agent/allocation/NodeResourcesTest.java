package io.jakri.agent.allocation;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.deviceplugin.Advertiser;
import io.jakri.agent.deviceplugin.ResourceBackend;
import io.jakri.agent.instance.InMemoryInstanceStore;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.InstanceUpdates;
import io.jakri.agent.instance.LocalDevices;
import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.agent.model.LocalDevice;
import io.jakri.crd.SlotUsage;
import io.jakri.handler.DiscoveredDevice;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * {@link NodeResources} built directly: an in-memory Instance store and an in-process {@link
 * Advertiser} that records what the node asks of the device-plugin side.
 */
class NodeResourcesTest {

  static final String NODE = "node-a";
  static final ConfigurationSpec CAMERAS =
      new ConfigurationSpec("cams", "simulated", "", List.of(), 2, Map.of(), Optional.empty());

  final InMemoryInstanceStore memory = new InMemoryInstanceStore();
  final RecordingAdvertiser advertiser = new RecordingAdvertiser();
  final List<SlotConflict> conflicts = new CopyOnWriteArrayList<>();

  final LocalClaims claims = new LocalClaims(NODE);

  SlotClaims slots(InstanceStore store) {
    return new SlotClaims(
        NODE, new InstanceUpdates(store, new Random(1), 20, Duration.ZERO), claims, conflicts::add);
  }

  final LocalDevices locals = new LocalDevices();

  /** The node's resources, reconciling from {@link #locals} as the agent wires them. */
  NodeResources resources(InstanceStore store) {
    NodeResources resources = new NodeResources(advertiser, locals, slots(store));
    locals.addListener(resources);
    return resources;
  }

  static LocalDevice device(String instance) {
    return new LocalDevice(instance, CAMERAS, DiscoveredDevice.of(instance, Map.of(), true), true);
  }

  @Test
  void aNewLocalDeviceServesItsInstanceResourceAndItsClassOnce() {
    resources(memory);

    locals.put(device("cams-1"));
    locals.put(device("cams-2"));
    locals.put(device("cams-1").withOnline(false));

    assertThat(advertiser.served)
        .containsExactly("akri.sh/cams-1", "akri.sh/cams", "akri.sh/cams-2");
    assertThat(advertiser.retired).isEmpty();
    assertThat(advertiser.refreshed).contains("akri.sh/cams-1", "akri.sh/cams-2", "akri.sh/cams");
    assertThat(locals.get("cams-1")).map(LocalDevice::online).contains(false);
  }

  @Test
  void theClassIsRetiredWithItsLastMember() {
    resources(memory);
    locals.put(device("cams-1"));
    locals.put(device("cams-2"));

    locals.remove("cams-1");
    assertThat(advertiser.retired).containsExactly("akri.sh/cams-1");

    locals.remove("cams-2");
    assertThat(advertiser.retired)
        .containsExactly("akri.sh/cams-1", "akri.sh/cams-2", "akri.sh/cams");
    assertThat(locals.all()).isEmpty();
  }

  /**
   * A grant reaches the served resources through this node's record of its claims: the Instance's
   * own store event came before the record held the slot, and showed it not this node's to grant.
   */
  @Test
  void aGrantRefreshesTheDevicesResourcesThroughTheClaimRecord() throws Exception {
    memory.create(Instance.create("cams-1", "cams", 2, true, NODE, Map.of()));
    SlotClaims slots = slots(memory);
    NodeResources resources = new NodeResources(advertiser, locals, slots);
    locals.addListener(resources);
    claims.addListener(resources::claimsChanged);
    locals.put(device("cams-1"));
    List<String> refreshedBefore = List.copyOf(advertiser.refreshed);
    memory.addListener(
        new InstanceStore.Listener() {
          @Override
          public void changed(Instance instance) {
            // The store's echo of the claim: the record does not hold the slot yet.
            assertThat(claims.held("cams-1")).doesNotContainKey("cams-1-0");
          }

          @Override
          public void deleted(String name) {}
        });

    slots.claim("cams-1", List.of("cams-1-0"), s -> nodeUse(NODE));

    assertThat(advertiser.refreshed.subList(refreshedBefore.size(), advertiser.refreshed.size()))
        .containsExactly("akri.sh/cams-1", "akri.sh/cams");
    assertThat(claims.held("cams-1")).containsKey("cams-1-0");
  }

  static SlotUsage nodeUse(String node) {
    return new SlotUsage.NodeUse(node);
  }

  /** Records what the node asks of the device-plugin side, in order. */
  static final class RecordingAdvertiser implements Advertiser {
    final List<String> served = new ArrayList<>();
    final List<String> retired = new ArrayList<>();
    final List<String> refreshed = new ArrayList<>();

    @Override
    public synchronized void serve(ResourceBackend backend) {
      served.add(backend.resourceName());
    }

    @Override
    public synchronized void retire(String resource) {
      retired.add(resource);
    }

    @Override
    public synchronized void refresh(String resource) {
      refreshed.add(resource);
    }
  }
}
