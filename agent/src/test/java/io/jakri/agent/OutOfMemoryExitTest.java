package io.jakri.agent;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** An OutOfMemoryError is logged through the agent's logging, then the process exits. */
class OutOfMemoryExitTest {

  @Test
  void anOutOfMemoryErrorIsLoggedThenTheProcessHalts() throws Exception {
    LogCapture logs = LogCapture.of(OutOfMemoryExit.class);
    List<Integer> halts = new ArrayList<>();
    OutOfMemoryExit handler = new OutOfMemoryExit(halts::add);
    try {
      Thread thread =
          new Thread(
              () -> {
                throw new OutOfMemoryError("Java heap space");
              },
              "jakri-discovery-1");
      thread.setUncaughtExceptionHandler(handler);
      thread.start();
      thread.join(10_000);
    } finally {
      logs.close();
    }
    assertThat(halts).containsExactly(OutOfMemoryExit.EXIT_CODE);
    assertThat(handler.reserved()).as("reserve released for the logging").isFalse();
    assertThat(logs.events())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getLevel()).isEqualTo(Level.ERROR);
              assertThat(e.getFormattedMessage())
                  .startsWith(
                      "out of memory in thread jakri-discovery-1: java.lang.OutOfMemoryError:"
                          + " Java heap space; exiting");
            });
  }

  @Test
  void otherErrorsAreLoggedWithoutExiting() throws Exception {
    List<Integer> halts = new ArrayList<>();
    OutOfMemoryExit handler = new OutOfMemoryExit(halts::add);
    Thread thread =
        new Thread(
            () -> {
              throw new IllegalStateException("boom");
            });
    thread.setUncaughtExceptionHandler(handler);
    thread.start();
    thread.join(10_000);
    assertThat(halts).isEmpty();
    assertThat(handler.reserved()).isTrue();
  }
}
