package io.jakri.handler;

import java.util.List;

/** Where a running {@link Discovery} reports what it sees. Thread-safe; never blocks long. */
public interface DeviceListener {

  /**
   * Reports every device the handler sees now (a full snapshot, not a delta). The agent diffs
   * consecutive snapshots; reporting the same snapshot twice is harmless.
   */
  void devices(List<DiscoveredDevice> devices);

  /**
   * Reports that discovery failed and stopped; the agent closes the {@link Discovery} and starts it
   * again with backoff. Devices already reported stay until the offline grace period ends.
   */
  void failed(String reason, Throwable cause);
}
