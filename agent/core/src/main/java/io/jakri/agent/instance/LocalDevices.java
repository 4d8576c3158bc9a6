package io.jakri.agent.instance;

import io.jakri.agent.model.LocalDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The devices this node's discovery reports, by Instance name (online, or offline within their
 * grace): the local half of what discovery writes, beside the Instance store. The root's router of
 * discovery's changes writes it; the node's resources reconcile from it, DRA and the Instance
 * repair read it. Thread-safe; listeners are told the Instance name of each change after it is
 * applied, on the writing thread, and must not block.
 */
public final class LocalDevices {

  /** Told about every change of the table. */
  @FunctionalInterface
  public interface Listener {
    /** The device of {@code instanceName} was added, changed or removed. */
    void localChanged(String instanceName);
  }

  private final Map<String, LocalDevice> devices = new ConcurrentHashMap<>();
  private final List<Listener> listeners = new CopyOnWriteArrayList<>();

  public void addListener(Listener listener) {
    listeners.add(listener);
  }

  public Optional<LocalDevice> get(String instanceName) {
    return Optional.ofNullable(devices.get(instanceName));
  }

  /** Every device in the table, in no order. */
  public List<LocalDevice> all() {
    return new ArrayList<>(devices.values());
  }

  /** Adds or replaces the device of its Instance. */
  public void put(LocalDevice device) {
    devices.put(device.instanceName(), device);
    tell(device.instanceName());
  }

  /** Removes the device of {@code instanceName}, if it is here. */
  public void remove(String instanceName) {
    if (devices.remove(instanceName) != null) {
      tell(instanceName);
    }
  }

  private void tell(String instanceName) {
    listeners.forEach(l -> l.localChanged(instanceName));
  }
}
