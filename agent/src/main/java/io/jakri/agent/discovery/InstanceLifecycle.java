package io.jakri.agent.discovery;

import io.jakri.agent.allocation.EnvContract;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceUpdates;
import io.jakri.agent.instance.SlotUsage;
import io.jakri.agent.instance.StoreException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes this node's view of discovered devices into the Instance store: an Instance is created
 * when first seen (or this node added to its {@code nodes}), its capacity and brokerProperties
 * follow the Configuration, and when the device leaves this node the node is removed (the Instance
 * deleted when no node is left). Idempotent; called from the discovery thread.
 */
public final class InstanceLifecycle {

  private static final Logger LOG = LoggerFactory.getLogger(InstanceLifecycle.class);

  private final String node;
  private final InstanceUpdates updates;

  public InstanceLifecycle(String node, InstanceUpdates updates) {
    this.node = node;
    this.updates = updates;
  }

  /** Records that this node sees {@code device}. */
  public void seen(LocalDevice device) throws StoreException {
    Map<String, String> properties =
        EnvContract.mergedProperties(
            device.device().properties(), device.configuration().brokerProperties());
    int capacity = device.configuration().capacity();
    Optional<Instance> stored =
        updates.apply(
            device.instanceName(),
            current -> {
              if (current.isEmpty()) {
                return Optional.of(
                    Instance.create(
                        device.instanceName(),
                        device.configuration().name(),
                        capacity,
                        device.device().shared(),
                        node,
                        properties));
              }
              Instance instance = current.get();
              TreeSet<String> nodes = new TreeSet<>(instance.nodes());
              nodes.add(node);
              return Optional.of(
                  instance.withNodes(nodes).withSpec(capacity, new LinkedHashMap<>(properties)));
            });
    stored.ifPresent(
        i -> LOG.debug("instance {}: seen on node {} (nodes {})", i.name(), node, i.nodes()));
  }

  /** Records that this node no longer sees the Instance; frees the slots this node held. */
  public void gone(String instanceName) throws StoreException {
    Optional<Instance> result =
        updates.apply(
            instanceName,
            current -> {
              if (current.isEmpty()) {
                return current;
              }
              Instance instance = current.get();
              TreeSet<String> nodes = new TreeSet<>(instance.nodes());
              nodes.remove(node);
              if (nodes.isEmpty()) {
                return Optional.empty();
              }
              Map<String, SlotUsage> usage = new LinkedHashMap<>(instance.deviceUsage());
              usage.replaceAll((slot, u) -> u.heldBy(node) ? SlotUsage.Free.INSTANCE : u);
              return Optional.of(instance.withNodes(nodes).withUsage(usage));
            });
    LOG.info(
        "instance {}: node {} left it{}",
        instanceName,
        node,
        result.isEmpty() ? "; no node left, instance deleted" : "");
  }
}
