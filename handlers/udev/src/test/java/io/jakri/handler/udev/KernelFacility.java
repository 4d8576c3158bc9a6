package io.jakri.handler.udev;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * Real-kernel test prerequisites: a test whose facility is missing fails under {@code CI=true} and
 * is skipped elsewhere. Also runs the small commands the tests need.
 */
public final class KernelFacility {

  private KernelFacility() {}

  /** Fails (CI) or aborts the test (elsewhere) unless {@code available}. */
  public static void require(boolean available, String what) {
    if (available) {
      return;
    }
    String message = "kernel facility missing, udev test not run: " + what;
    if ("true".equals(System.getenv("CI"))) {
      Assertions.fail(message);
    }
    Assumptions.abort(message);
  }

  public static boolean root() {
    return "root".equals(System.getProperty("user.name"));
  }

  /** Runs a command; its stdout, or an exception with its stderr when it fails. */
  public static String run(List<String> command) throws IOException {
    Process p = new ProcessBuilder(command).redirectErrorStream(false).start();
    try {
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException(command + " timed out");
      }
      if (p.exitValue() != 0) {
        throw new IOException(command + " exited " + p.exitValue() + ": " + err.strip());
      }
      return out;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(command + " interrupted", e);
    }
  }

  /** Whether {@code command} can be run (found on the PATH). */
  public static boolean installed(String command) {
    for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
      if (java.nio.file.Files.isExecutable(java.nio.file.Path.of(dir, command))) {
        return true;
      }
    }
    return false;
  }
}
