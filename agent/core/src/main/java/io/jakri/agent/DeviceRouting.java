package io.jakri.agent;

import io.jakri.agent.discovery.DeviceChange;
import io.jakri.agent.discovery.DeviceSink;
import io.jakri.agent.instance.InstanceLifecycle;
import io.jakri.agent.instance.LocalDevices;
import io.jakri.agent.instance.StoreException;

/**
 * Where discovery's device changes go, in this order: the Instance store, then this node's local
 * device table (from which the node's resources, what the kubelet is advertised, reconcile), then
 * events (metrics). Only stores are written here. A change whose Instance write fails goes no
 * further; a removal goes on when this node could not be taken off its Instance.
 */
final class DeviceRouting implements DeviceSink {

  /** The last step: what is told about each change once it is applied. */
  @FunctionalInterface
  interface Events {
    void deviceChanged(DeviceChange change, long reportedNanos);
  }

  private final InstanceLifecycle store;
  private final LocalDevices locals;
  private final Events events;

  DeviceRouting(InstanceLifecycle store, LocalDevices locals, Events events) {
    this.store = store;
    this.locals = locals;
    this.events = events;
  }

  @Override
  public void accept(DeviceChange change, long reportedNanos) throws StoreException {
    StoreException failed = null;
    if (change instanceof DeviceChange.Released) {
      store.gone(change.instanceName());
    } else if (change instanceof DeviceChange.Vanished v) {
      locals.put(v.device());
    } else if (change instanceof DeviceChange.Removed || change instanceof DeviceChange.Withdrawn) {
      try {
        store.gone(change.instanceName());
      } catch (StoreException e) {
        failed = e;
      }
      locals.remove(change.instanceName());
    } else if (change instanceof DeviceChange.OfDevice c) {
      store.seen(c.device());
      locals.put(c.device());
    }
    events.deviceChanged(change, reportedNanos);
    if (failed != null) {
      throw failed;
    }
  }
}
