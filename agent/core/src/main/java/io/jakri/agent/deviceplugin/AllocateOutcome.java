package io.jakri.agent.deviceplugin;

import java.util.Objects;

/** How one Allocate call ended, as told to {@link DevicePluginReport.Allocated}. */
public sealed interface AllocateOutcome {

  /** Every container's devices were claimed and the response sent. */
  record Granted() implements AllocateOutcome {}

  /** The request was refused ({@code FAILED_PRECONDITION} to the kubelet) for {@code reason}. */
  record Refused(AllocationException.Reason reason) implements AllocateOutcome {
    public Refused {
      Objects.requireNonNull(reason, "reason");
    }
  }

  /** An unexpected error (a bug) ended the call with {@code INTERNAL}. */
  record Failed() implements AllocateOutcome {}
}
