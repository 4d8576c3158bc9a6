package io.jakri.agent;

import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent process's handler of uncaught throwables: an {@link OutOfMemoryError} is logged through
 * the agent's logging (one ERROR line naming the thread and the limits to look at) and the process
 * exits with {@link #EXIT_CODE}, so that the kubelet restarts it rather than it running on with
 * some threads dead; anything else is logged and the thread ends. A small reserve of memory is
 * released first so that logging itself has room.
 */
public final class OutOfMemoryExit implements Thread.UncaughtExceptionHandler {

  /** Exit code after an OutOfMemoryError (as the JVM's -XX:+ExitOnOutOfMemoryError uses). */
  public static final int EXIT_CODE = 3;

  private static final Logger LOG = LoggerFactory.getLogger(OutOfMemoryExit.class);

  private final IntConsumer halt;
  private volatile byte[] reserve = new byte[256 * 1024];

  /**
   * @param halt ends the process with the code (the agent: {@code Runtime.getRuntime()::halt})
   */
  public OutOfMemoryExit(IntConsumer halt) {
    this.halt = halt;
  }

  /** Installs a handler that halts the JVM as the default for every thread. */
  public static void install() {
    Thread.setDefaultUncaughtExceptionHandler(
        new OutOfMemoryExit(code -> Runtime.getRuntime().halt(code)));
  }

  @Override
  public void uncaughtException(Thread thread, Throwable error) {
    if (error instanceof OutOfMemoryError) {
      reserve = null;
      try {
        LOG.error(
            "out of memory in thread {}: {}; exiting (see --max-slots-per-configuration,"
                + " --max-slots-per-agent and the memory limit)",
            thread.getName(),
            error.toString());
      } finally {
        halt.accept(EXIT_CODE);
      }
      return;
    }
    LOG.error("thread {} ended by an unexpected error", thread.getName(), error);
  }

  /** Whether the memory reserve is still held (for tests). */
  boolean reserved() {
    return reserve != null;
  }
}
