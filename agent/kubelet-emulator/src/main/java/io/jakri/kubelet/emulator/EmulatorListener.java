package io.jakri.kubelet.emulator;

import java.util.Map;

/**
 * Observes what the emulated kubelet sees. All methods have empty defaults.
 *
 * <p>Threading: callbacks are delivered one at a time, in the order the events happened, never
 * while the emulator holds its lock, on an emulator thread or on the thread of the public call that
 * caused the event. They must return quickly and must not call {@link KubeletEmulator#close()} or
 * {@link KubeletEmulator#restart()}.
 */
public interface EmulatorListener {

  /** A Register call was accepted (after dialling the plugin and reading its options). */
  default void registered(String resource, String endpoint) {}

  /** A ListAndWatch message arrived: the full device list, id to "Healthy"/"Unhealthy". */
  default void snapshot(String resource, Map<String, String> devices) {}

  /** The ListAndWatch stream of the current endpoint ended; all devices are now unhealthy. */
  default void streamEnded(String resource) {}

  /** The resource stayed without a stream for the stale timeout; its capacity is now 0. */
  default void resourceDropped(String resource) {}

  /** A Register call was answered with an error; {@code reason} is the error text returned. */
  default void registrationRejected(String resource, String reason) {}
}
