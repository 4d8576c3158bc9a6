package io.jakri.controller;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Runs the packaged controller ({@code target/jakri-controller.jar}) in a JVM of its own. */
final class ControllerJar {

  static final Path JAR = Path.of("target", "jakri-controller.jar").toAbsolutePath();

  private ControllerJar() {}

  /**
   * Starts the jar with {@code kubeconfig} (and no other source of credentials), stdout into {@code
   * out} and stderr into {@code err} (may be the same file), {@code JAKRI_LOG_FORMAT} unset.
   */
  static Process start(Path kubeconfig, Path out, Path err, List<String> jvmFlags, String... args)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Dkubernetes.auth.tryServiceAccount=false");
    command.addAll(jvmFlags);
    command.add("-jar");
    command.add(JAR.toString());
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile());
    if (out.equals(err)) {
      builder.redirectErrorStream(true);
    } else {
      builder.redirectError(err.toFile());
    }
    builder.environment().remove("JAKRI_LOG_FORMAT");
    builder.environment().remove("JAKRI_NAMESPACE");
    builder.environment().remove("JAKRI_NAMESPACES");
    builder.environment().put("KUBECONFIG", kubeconfig.toString());
    return builder.start();
  }
}
