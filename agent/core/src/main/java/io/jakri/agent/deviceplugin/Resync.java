package io.jakri.agent.deviceplugin;

import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings {@link DevicePluginManager}'s resources in line with the device-plugin directory: a new
 * kubelet (its socket created anew), our sockets that vanished (served again on fresh sockets) and
 * registrations the current kubelet lacks. Resources whose start is queued or under way are left
 * alone: they register (or are served again) when the start completes. Idempotent. Confined to the
 * manager's control thread, except {@link #request()}.
 */
final class Resync {
  private static final Logger LOG = LoggerFactory.getLogger(DevicePluginManager.class);

  private final KubeletRegistrar kubelet;
  private final Map<String, ServedResource> entries;
  private final Map<String, ServedResource> bySocket;
  private final Executor control;
  private final BooleanSupplier closed;
  private final Consumer<ServedResource> serveAgain;
  private final Consumer<ServedResource> register;
  private final Consumer<DevicePluginEvent> events;
  private final AtomicBoolean pending = new AtomicBoolean();

  /**
   * @param entries the served resources by resource name
   * @param bySocket the served resources by their current socket's file name (control thread)
   * @param serveAgain stops the resource's server, if any, and starts a new one (it registers once
   *     serving)
   * @param register sends Register for the resource's current server
   * @param events must not throw
   */
  Resync(
      KubeletRegistrar kubelet,
      Map<String, ServedResource> entries,
      Map<String, ServedResource> bySocket,
      Executor control,
      BooleanSupplier closed,
      Consumer<ServedResource> serveAgain,
      Consumer<ServedResource> register,
      Consumer<DevicePluginEvent> events) {
    this.kubelet = kubelet;
    this.entries = entries;
    this.bySocket = bySocket;
    this.control = control;
    this.closed = closed;
    this.serveAgain = serveAgain;
    this.register = register;
    this.events = events;
  }

  /** Runs {@link #run()} on the control executor; requests before it runs join it. Any thread. */
  void request() {
    if (!closed.getAsBoolean() && pending.compareAndSet(false, true)) {
      control.execute(
          () -> {
            pending.set(false);
            run();
          });
    }
  }

  /** Serves again the resources whose socket files (by file name) were deleted. Control thread. */
  void socketsDeleted(Set<String> names) {
    if (closed.getAsBoolean()) {
      return;
    }
    for (String name : names) {
      ServedResource entry = bySocket.get(name);
      if (entry == null
          || entry.starting
          || entry.queued
          || entry.server == null
          || entries.get(entry.backend.resourceName()) != entry
          || SocketFiles.exists(entry.server.socket())) {
        continue;
      }
      LOG.debug(
          "resource {}: socket {} vanished; serving again", entry.backend.resourceName(), name);
      serveAgain.accept(entry);
      entry.registeredGeneration = -1;
    }
  }

  /** Brings reality in line: kubelet generation, our sockets, registrations. Control thread. */
  void run() {
    if (closed.getAsBoolean()) {
      return;
    }
    OptionalLong restarted = kubelet.checkForNewKubelet();
    if (restarted.isPresent()) {
      long g = restarted.getAsLong();
      LOG.info("kubelet socket appeared (generation {}); registering every resource", g);
      events.accept(new DevicePluginEvent.KubeletRestarted(g));
    }
    long generation = kubelet.generation();
    for (ServedResource entry : entries.values()) {
      if (entry.starting || entry.queued) {
        continue; // registers (or serves again) when the start completes
      }
      if (entry.server == null || !SocketFiles.exists(entry.server.socket())) {
        if (entry.server != null) {
          LOG.debug(
              "resource {}: socket {} vanished; serving again",
              entry.backend.resourceName(),
              entry.server.socket().getFileName());
        }
        serveAgain.accept(entry);
        entry.registeredGeneration = -1;
        continue;
      }
      if (entry.registeredGeneration != generation && entry.inFlightGeneration != generation) {
        register.accept(entry);
      }
    }
  }
}
