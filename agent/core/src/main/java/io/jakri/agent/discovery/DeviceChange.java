package io.jakri.agent.discovery;

import io.jakri.agent.model.LocalDevice;
import java.time.Instant;

/**
 * What happened to one device of a Configuration on this node, as a value: produced by a {@link
 * DeviceTable}, handed by {@link DiscoveryManager} to its {@link DeviceSink}.
 *
 * <p>The first five cases are what a handler's snapshots (or the offline grace ending) did to the
 * device; the last three are the agent's own bookkeeping of Instances (written again, withdrawn
 * with their Configuration, or left because no discovery reports them).
 */
public sealed interface DeviceChange {

  /** The Instance the change is about. */
  String instanceName();

  /** Which case this is (for metrics and logs). */
  Kind kind();

  /** The cases, by name. */
  enum Kind {
    APPEARED,
    RETURNED,
    UPDATED,
    VANISHED,
    REMOVED,
    REWRITTEN,
    WITHDRAWN,
    RELEASED;

    /**
     * Whether a handler's snapshot or the offline grace ending made the change (not the agent's own
     * bookkeeping of Instances: {@link #REWRITTEN}, {@link #WITHDRAWN}, {@link #RELEASED}).
     */
    public boolean reported() {
      return this != REWRITTEN && this != WITHDRAWN && this != RELEASED;
    }

    /** Whether the change writes the device's Instance and keeps the device advertised. */
    public boolean writesInstance() {
      return this == APPEARED || this == RETURNED || this == UPDATED || this == REWRITTEN;
    }
  }

  /** A change about a device the table tracks (every case but {@link Released}). */
  sealed interface OfDevice extends DeviceChange {
    LocalDevice device();

    @Override
    default String instanceName() {
      return device().instanceName();
    }
  }

  /** Reported for the first time (or again after it left). */
  record Appeared(LocalDevice device) implements OfDevice {
    @Override
    public Kind kind() {
      return Kind.APPEARED;
    }
  }

  /** Reported again while in its offline grace: healthy again. */
  record Returned(LocalDevice device) implements OfDevice {
    @Override
    public Kind kind() {
      return Kind.RETURNED;
    }
  }

  /** Still reported, with other details (properties, mounts, class). */
  record Updated(LocalDevice device) implements OfDevice {
    @Override
    public Kind kind() {
      return Kind.UPDATED;
    }
  }

  /**
   * Missing from a snapshot: unhealthy now ({@code device} is offline), removed at {@code
   * graceEnds} unless it comes back.
   */
  record Vanished(LocalDevice device, Instant graceEnds) implements OfDevice {
    @Override
    public Kind kind() {
      return Kind.VANISHED;
    }
  }

  /** Its offline grace ended: no longer advertised, this node leaves its Instance. */
  record Removed(LocalDevice device) implements OfDevice {
    @Override
    public Kind kind() {
      return Kind.REMOVED;
    }
  }

  /**
   * Its Instance is written again as it is now: its Configuration changed (capacity or
   * brokerProperties), or the Instance was changed elsewhere while the device is here.
   */
  record Rewritten(LocalDevice device) implements OfDevice {
    @Override
    public Kind kind() {
      return Kind.REWRITTEN;
    }
  }

  /**
   * Dropped with its Configuration (deleted, or restarted afresh): no longer advertised, this node
   * leaves its Instance.
   */
  record Withdrawn(LocalDevice device) implements OfDevice {
    @Override
    public Kind kind() {
      return Kind.WITHDRAWN;
    }
  }

  /**
   * An Instance this node was listed in that no running discovery reports (left over from before a
   * restart): this node leaves it. Nothing of it is advertised.
   */
  record Released(String instanceName) implements DeviceChange {
    @Override
    public Kind kind() {
      return Kind.RELEASED;
    }
  }
}
