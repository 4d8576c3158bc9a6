package io.jakri.agent.controlplane;

import io.jakri.agent.dra.KubeletDraPlugin;
import io.jakri.agent.dra.ResourceSlicePublisher;
import java.io.IOException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Dynamic Resource Allocation's parts (cluster mode, when enabled): the ResourceSlice publisher on
 * a one-thread timer of its own, and the kubelet DRA plugin.
 */
public record DraParts(
    ResourceSlicePublisher slices, KubeletDraPlugin plugin, ScheduledExecutorService timer) {

  /** A one-thread timer for the slices that drops its delayed tasks on shutdown. */
  static ScheduledExecutorService newTimer() {
    ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "jakri-dra-slices-1");
              t.setDaemon(true);
              return t;
            });
    timer.setRemoveOnCancelPolicy(true);
    timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    return timer;
  }

  /** Serves the plugin, then publishes the slices. */
  public void start() throws IOException {
    plugin.start();
    slices.start();
  }

  /** Stops serving, then stops the timer and the publisher. */
  public void close() {
    plugin.close();
    timer.shutdownNow();
    try {
      timer.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    slices.close();
  }
}
