package io.jakri.agent.instance;

import io.jakri.agent.model.EnvContract;
import io.jakri.agent.model.LocalDevice;
import io.jakri.agent.model.NodeClaims;
import io.jakri.crd.SlotUsage;
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
 *
 * <p>A write that creates an Instance or adds this node to its {@code nodes} also carries this
 * node's claims ({@link NodeClaims}) in the slots it finds free (slot rule 1 in
 * docs/operations.md): a node is never listed in an Instance it wrote without the slots it holds,
 * so an Instance deleted or replaced while pods use it comes back with their claims.
 */
public final class InstanceLifecycle {

  private static final Logger LOG = LoggerFactory.getLogger(InstanceLifecycle.class);

  private final String node;
  private final InstanceUpdates updates;
  private final NodeClaims claims;

  public InstanceLifecycle(String node, InstanceUpdates updates, NodeClaims claims) {
    this.node = node;
    this.updates = updates;
    this.claims = claims;
  }

  /** {@code instance} with this node's claims in the slots it leaves free. */
  private Instance withClaims(Instance instance) {
    Map<String, SlotUsage> held = claims.held(instance.name());
    if (held.isEmpty()) {
      return instance;
    }
    Map<String, SlotUsage> usage = new LinkedHashMap<>(instance.deviceUsage());
    boolean changed = false;
    for (Map.Entry<String, SlotUsage> e : held.entrySet()) {
      if (usage.get(e.getKey()) instanceof SlotUsage.Free) {
        usage.put(e.getKey(), e.getValue());
        changed = true;
      }
    }
    return changed ? instance.withUsage(usage) : instance;
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
                    withClaims(
                        Instance.create(
                            device.instanceName(),
                            device.configuration().name(),
                            capacity,
                            device.device().shared(),
                            node,
                            properties)));
              }
              Instance instance = current.get();
              TreeSet<String> nodes = new TreeSet<>(instance.nodes());
              Instance next = instance.withSpec(capacity, new LinkedHashMap<>(properties));
              if (nodes.add(node)) {
                next = withClaims(next.withNodes(nodes));
              }
              return Optional.of(next);
            });
    stored.ifPresent(
        i -> LOG.debug("instance {}: seen on node {} (nodes {})", i.name(), node, i.nodes()));
  }

  /** Records that this node no longer sees the Instance; frees the slots this node held. */
  public void gone(String instanceName) throws StoreException {
    claims.releaseAll(instanceName);
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
    // Again: store states seen while the write was retried may have brought claims back.
    claims.releaseAll(instanceName);
    LOG.info(
        "instance {}: node {} left it{}",
        instanceName,
        node,
        result.isEmpty() ? "; no node left, instance deleted" : "");
  }
}
