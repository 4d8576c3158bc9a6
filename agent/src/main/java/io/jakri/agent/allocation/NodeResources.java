package io.jakri.agent.allocation;

import io.jakri.agent.cdi.CdiSpecs;
import io.jakri.agent.deviceplugin.Advertiser;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.model.LocalDevice;
import io.jakri.crd.SlotUsage;
import java.util.List;
import java.util.Optional;

/**
 * What this node advertises: one Instance resource per locally discovered device and one class
 * resource per device class, kept in step with local discovery, the Instance store and this node's
 * record of its claims (a grant or a free changes what is healthy). Each served resource answers
 * from the local device table and the slot claims ({@link Sources}), never from this class.
 * Thread-safe: called from the discovery thread, store and record listeners and gRPC threads.
 */
public final class NodeResources implements InstanceStore.Listener {

  private final Advertiser plugins;
  private final LocalDevices locals = new LocalDevices();
  private final SlotClaims slots;
  private final Sources sources;
  private final Optional<CdiSpecs> cdi;

  public NodeResources(Advertiser plugins, SlotClaims slots) {
    this(plugins, slots, Optional.empty());
  }

  /**
   * @param slots the slot claims behind Allocate
   * @param cdi when present, the CDI spec of every local device's Instance is kept there (written
   *     before its resources are served, removed after they are retired), and Allocate names the
   *     CDI devices of the slots it gives
   */
  public NodeResources(Advertiser plugins, SlotClaims slots, Optional<CdiSpecs> cdi) {
    this.plugins = plugins;
    this.slots = slots;
    this.cdi = cdi;
    this.sources = new Sources(locals, slots, cdi);
  }

  /**
   * The slot usage a device the kubelet reports in use stands for, when it is a slot of a device
   * discovered here, reported under this device's Instance resource (a node claim) or its class
   * resource (a class claim); empty for anything else (other device plugins' devices).
   */
  public Optional<SlotUsage> usageOf(String resourceName, String deviceId) {
    Optional<LocalDevice> found = locals.get(ClassResource.instanceOf(deviceId));
    if (found.isEmpty()) {
      return Optional.empty();
    }
    LocalDevice device = found.get();
    if (resourceName.equals(device.instanceResource())) {
      return Optional.of(new SlotUsage.NodeUse(slots.node()));
    }
    if (resourceName.equals(device.classResource())) {
      return Optional.of(new SlotUsage.ClassUse(deviceId, slots.node()));
    }
    return Optional.empty();
  }

  /** Adds or updates a locally discovered device (online or in its offline grace). */
  public synchronized void upsertLocal(LocalDevice device) {
    // The spec first: a runtime must find it as soon as the kubelet can allocate the resource.
    cdi.ifPresent(
        c ->
            c.serve(
                device.instanceName(),
                device.configuration().name(),
                device.configuration().capacity(),
                InstanceContract.of(device)));
    LocalDevice previous = locals.put(device);
    if (previous != null && !previous.classResource().equals(device.classResource())) {
      leaveClass(previous);
    }
    if (previous == null) {
      plugins.serve(
          new InstanceResource(sources, device.instanceName(), device.instanceResource()));
    }
    if (locals.join(device)) {
      plugins.serve(new ClassResource(sources, device.classResource()));
    }
    refresh(device.instanceName());
  }

  /** Forgets a local device: retires its Instance resource and, if it was the last, its class. */
  public synchronized void removeLocal(String instanceName) {
    LocalDevice previous = locals.remove(instanceName);
    if (previous == null) {
      return;
    }
    plugins.retire(previous.instanceResource());
    leaveClass(previous);
    slots.forget(instanceName);
    cdi.ifPresent(c -> c.retire(instanceName));
  }

  private void leaveClass(LocalDevice device) {
    locals
        .leave(device)
        .ifPresent(
            membersLeft -> {
              if (membersLeft) {
                plugins.refresh(device.classResource());
              } else {
                plugins.retire(device.classResource());
              }
            });
  }

  public Optional<LocalDevice> local(String instanceName) {
    return locals.get(instanceName);
  }

  /** Local devices, for diagnostics and the demo. */
  public List<LocalDevice> locals() {
    return locals.all();
  }

  @Override
  public void changed(Instance instance) {
    refresh(instance.name());
  }

  @Override
  public void deleted(String name) {
    refresh(name);
  }

  /**
   * This node's record of its claims changed for {@code instanceName} (a grant, a container seen
   * using a slot, an adopted claim): the Instance's store event may have shown the slots before the
   * record held them, so not this node's to grant.
   */
  public void claimsChanged(String instanceName) {
    refresh(instanceName);
  }

  private void refresh(String instanceName) {
    locals
        .get(instanceName)
        .ifPresent(
            device -> {
              plugins.refresh(device.instanceResource());
              plugins.refresh(device.classResource());
            });
  }
}
