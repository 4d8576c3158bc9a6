package io.jakri.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The packaged controller against an API server that is not there: it says so and exits. */
class UnreachableApiServerIT {

  static final Path JAR = Path.of("target", "jakri-controller.jar").toAbsolutePath();

  @TempDir Path tmp;

  @Test
  void itNamesTheServerItConnectsToAndExitsWithOneClearLine() throws Exception {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort(); // free once closed: nothing listens there
    }
    String server = "https://127.0.0.1:" + closedPort + "/";
    ProcessBuilder builder =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dkubernetes.master=" + server,
                "-Dkubernetes.auth.tryKubeConfig=false",
                "-Dkubernetes.auth.tryServiceAccount=false",
                "-Djakri.controller.syncTimeoutSeconds=3",
                "-jar",
                JAR.toString())
            .redirectErrorStream(true)
            .redirectOutput(tmp.resolve("out").toFile());
    builder.environment().remove("JAKRI_LOG_FORMAT");
    Process controller = builder.start();
    try {
      assertThat(controller.waitFor(60, TimeUnit.SECONDS)).isTrue();
    } finally {
      controller.destroyForcibly();
    }
    String out = Files.readString(tmp.resolve("out"));
    assertThat(controller.exitValue()).as(out).isEqualTo(1);
    assertThat(out).contains("API server " + server);
    assertThat(out)
        .contains("the caches did not sync within 3s")
        .contains("127.0.0.1:" + closedPort)
        .contains("exiting");
    assertThat(out).as("no stack trace").doesNotContain("\tat ").doesNotContain("Exception:");
  }
}
