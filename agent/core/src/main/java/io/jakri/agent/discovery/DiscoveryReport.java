package io.jakri.agent.discovery;

import io.jakri.agent.model.ContainerPaths;
import java.util.Objects;

/**
 * What discovery reports as it runs the handlers: values handed to the one sink the composition
 * root passes to {@link DiscoveryManager} (metrics and the cluster mode's status publisher match on
 * them, wrapped in the agent's report stream). Every report is emitted on the discovery thread
 * ({@code jakri-discovery-1}), in the order things happened there; the sink must not block and
 * should not throw (a throw is logged and dropped). A {@code handler} value is the handler name (or
 * alias) a Configuration asks for, and only ever one that is installed, so its values are bounded
 * by the installed plugins.
 */
public sealed interface DiscoveryReport {

  /**
   * A handler's snapshot was processed (snapshots arriving faster are coalesced first; one
   * processed again after a failed Instance write counts again).
   */
  record Snapshot(String handler) implements DiscoveryReport {
    public Snapshot {
      Objects.requireNonNull(handler, "handler");
    }
  }

  /** A handler failed (its discovery is restarted with backoff, or waits for a fixed one). */
  record HandlerFailed(String handler, HandlerFailure failure) implements DiscoveryReport {
    public HandlerFailed {
      Objects.requireNonNull(handler, "handler");
      Objects.requireNonNull(failure, "failure");
    }
  }

  /** The agent newly refused (part of) a Configuration: see {@link Refusal}. */
  record Refused(Refusal refusal) implements DiscoveryReport {
    public Refused {
      Objects.requireNonNull(refusal, "refusal");
    }
  }

  /**
   * A handler's devices carried {@code count} mounts or device nodes ({@code kind}) that no
   * container may get ({@link ContainerPaths}); each device is served without them. Counted once
   * per device until its refused entries change.
   */
  record EntriesRefused(ContainerPaths.Kind kind, int count) implements DiscoveryReport {
    public EntriesRefused {
      Objects.requireNonNull(kind, "kind");
    }
  }

  /** A handler started a Configuration's discovery (first start or a restart). */
  record DiscoveryStarted(String handler, String configuration) implements DiscoveryReport {
    public DiscoveryStarted {
      Objects.requireNonNull(handler, "handler");
      Objects.requireNonNull(configuration, "configuration");
    }
  }

  /**
   * A Configuration's first snapshot was processed, {@code nanos} after the agent first saw the
   * Configuration (once per Configuration while it stays).
   */
  record FirstResults(String configuration, long nanos) implements DiscoveryReport {
    public FirstResults {
      Objects.requireNonNull(configuration, "configuration");
    }
  }

  /**
   * The status of {@code configuration} changed (its state, message or device count), or it went
   * away; {@link DiscoveryManager#statuses} has the new one.
   */
  record StatusChanged(String configuration) implements DiscoveryReport {
    public StatusChanged {
      Objects.requireNonNull(configuration, "configuration");
    }
  }
}
