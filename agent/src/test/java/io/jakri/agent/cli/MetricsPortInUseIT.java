package io.jakri.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * A {@code --metrics-port} another process holds is one line on stderr and exit code 1, like every
 * other mistake the command line reports, not a {@code BindException} stack trace. Starts a
 * standalone agent with the kubelet emulator, which stops again when the port cannot be bound.
 */
class MetricsPortInUseIT {

  @TempDir Path tmp;

  @Test
  void anOccupiedMetricsPortIsOneLineAndExitCodeOne() throws Exception {
    Path config = Files.createDirectories(tmp.resolve("config"));
    Path plugins = Files.createDirectories(tmp.resolve("plugins"));
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      StringWriter err = new StringWriter();
      CommandLine cmd = Main.commandLine();
      cmd.setErr(new PrintWriter(err, true));

      int code =
          cmd.execute(
              "--standalone",
              "--emulate-kubelet",
              "--config",
              config.toString(),
              "--plugins-dir",
              plugins.toString(),
              "--discovery-handlers-dir",
              "none",
              "--node-name",
              "node-a",
              "--metrics-bind-address",
              "127.0.0.1",
              "--metrics-port",
              Integer.toString(taken.getLocalPort()));

      assertThat(code).isEqualTo(1);
      assertThat(err.toString().lines().filter(l -> !l.isBlank()))
          .containsExactly(
              "jakri-agent: --metrics-port: cannot listen on 127.0.0.1 port "
                  + taken.getLocalPort()
                  + ": Address already in use");
    }
  }
}
