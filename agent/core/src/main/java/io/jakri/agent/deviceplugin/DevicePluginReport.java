package io.jakri.agent.deviceplugin;

import java.time.Duration;
import java.util.Objects;

/**
 * What the device-plugin side reports as it serves resources to the kubelet: values handed to the
 * one sink the composition root passes to {@link DevicePluginManager} (metrics, Events, tests match
 * on them). The sink must not block and should not throw (a throw is logged and dropped).
 */
public sealed interface DevicePluginReport {

  /** The resource whose server the report is about; empty for {@link KubeletRestarted}. */
  String resource();

  /**
   * The kubelet accepted the resource's Register; {@code again} when it had been registered before
   * (a kubelet restart or a socket served anew). Control thread.
   */
  record Registered(String resource, String endpoint, boolean again)
      implements DevicePluginReport {}

  /** Serving or registering the resource failed for {@code reason}; retried. Control thread. */
  record RegistrationFailed(String resource, String reason) implements DevicePluginReport {}

  /**
   * A kubelet socket appeared ({@code generation} 1 is the first one seen, higher ones are
   * restarts). Control thread.
   */
  record KubeletRestarted(long generation) implements DevicePluginReport {
    @Override
    public String resource() {
      return "";
    }
  }

  /** The resource was retired for good (no longer served). Control thread. */
  record Retired(String resource) implements DevicePluginReport {}

  /**
   * An Allocate call for the resource ended after {@code took}; on the gRPC thread that served it,
   * after the answer was sent.
   */
  record Allocated(String resource, AllocateOutcome outcome, Duration took)
      implements DevicePluginReport {
    public Allocated {
      Objects.requireNonNull(outcome, "outcome");
      Objects.requireNonNull(took, "took");
    }
  }

  /**
   * The kubelet's ListAndWatch streams of the resource are up to date: {@code changed} when a new
   * snapshot of its devices was just sent to at least one stream (an update, or the first snapshot
   * of a new stream), false when the devices were unchanged and the open streams already had them.
   * Not reported while no stream is open. Any thread.
   */
  record Advertised(String resource, boolean changed) implements DevicePluginReport {}

  /**
   * The process is within its reserve of open files: {@code waiting} resources are not served until
   * files are freed ({@code open} of {@code limit} in use when last counted; -1 unknown). Reported
   * when it begins, about every half second while it lasts, and with {@code waiting} 0 when it
   * ends. Control thread.
   */
  record OpenFilesLow(int waiting, long open, long limit) implements DevicePluginReport {
    @Override
    public String resource() {
      return "";
    }
  }
}
