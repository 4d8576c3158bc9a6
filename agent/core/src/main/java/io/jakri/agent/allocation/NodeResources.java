package io.jakri.agent.allocation;

import io.jakri.agent.cdi.CdiSpecs;
import io.jakri.agent.deviceplugin.Advertiser;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.LocalDevices;
import io.jakri.agent.model.LocalDevice;
import io.jakri.crd.SlotUsage;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What this node advertises: one Instance resource per locally discovered device and one class
 * resource per device class. It reconciles from the node's local device table ({@link
 * LocalDevices}, which discovery's router writes), the Instance store and this node's record of its
 * claims (a grant or a free changes what is healthy); nothing calls it with a device. Each served
 * resource answers from the local device table and the slot claims ({@link Sources}), never from
 * this class. Thread-safe: told on the discovery thread, by store and record listeners.
 */
public final class NodeResources implements InstanceStore.Listener, LocalDevices.Listener {

  private final Advertiser plugins;
  private final LocalDevices devices;
  // What is advertised now, per Instance: the device as last served (its class, for leaving it).
  // Written under this object's lock; read by refreshes from any thread.
  private final Map<String, LocalDevice> served = new ConcurrentHashMap<>();
  private final ClassMembers classes = new ClassMembers();
  private final SlotClaims slots;
  private final Sources sources;
  private final Optional<CdiSpecs> cdi;

  public NodeResources(Advertiser plugins, LocalDevices devices, SlotClaims slots) {
    this(plugins, devices, slots, Optional.empty());
  }

  /**
   * @param devices the local device table it reconciles from (register this object as its listener)
   * @param slots the slot claims behind Allocate
   * @param cdi when present, the CDI spec of every local device's Instance is kept there (written
   *     before its resources are served, removed after they are retired), and Allocate names the
   *     CDI devices of the slots it gives
   */
  public NodeResources(
      Advertiser plugins, LocalDevices devices, SlotClaims slots, Optional<CdiSpecs> cdi) {
    this.plugins = plugins;
    this.devices = devices;
    this.slots = slots;
    this.cdi = cdi;
    this.sources = new Sources(devices, classes, slots, cdi);
  }

  /**
   * The slot usage a device the kubelet reports in use stands for, when it is a slot of a device
   * discovered here, reported under this device's Instance resource (a node claim) or its class
   * resource (a class claim); empty for anything else (other device plugins' devices).
   */
  public Optional<SlotUsage> usageOf(String resourceName, String deviceId) {
    Optional<LocalDevice> found = devices.get(ClassResource.instanceOf(deviceId));
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

  /** Brings what is served for {@code instanceName} in line with the local device table. */
  @Override
  public synchronized void localChanged(String instanceName) {
    Optional<LocalDevice> now = devices.get(instanceName);
    if (now.isPresent()) {
      serve(now.get());
    } else {
      withdraw(instanceName);
    }
  }

  /** Serves a local device (online or in its offline grace), or takes in its change. */
  private void serve(LocalDevice device) {
    // The spec first: a runtime must find it as soon as the kubelet can allocate the resource.
    cdi.ifPresent(
        c ->
            c.serve(
                device.instanceName(),
                device.configuration().name(),
                device.configuration().capacity(),
                InstanceContract.of(device)));
    LocalDevice previous = served.put(device.instanceName(), device);
    if (previous != null && !previous.classResource().equals(device.classResource())) {
      leaveClass(previous);
    }
    if (previous == null) {
      plugins.serve(
          new InstanceResource(sources, device.instanceName(), device.instanceResource()));
    }
    if (classes.join(device)) {
      plugins.serve(new ClassResource(sources, device.classResource()));
    }
    refresh(device.instanceName());
  }

  /** Retires a device's Instance resource and, if it was the last, its class. */
  private void withdraw(String instanceName) {
    LocalDevice previous = served.remove(instanceName);
    if (previous == null) {
      return;
    }
    plugins.retire(previous.instanceResource());
    leaveClass(previous);
    slots.forget(instanceName);
    cdi.ifPresent(c -> c.retire(instanceName));
  }

  private void leaveClass(LocalDevice device) {
    // A served device always joined its class: none left means the class goes too.
    if (classes.leave(device)) {
      plugins.refresh(device.classResource());
    } else {
      plugins.retire(device.classResource());
    }
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
    LocalDevice device = served.get(instanceName);
    if (device != null) {
      plugins.refresh(device.instanceResource());
      plugins.refresh(device.classResource());
    }
  }
}
