package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.jakri.agent.LogCapture;
import io.jakri.agent.Safeguards;
import io.jakri.agent.TestAgent;
import io.jakri.logging.LogFormat;
import io.jakri.logging.LogText;
import io.jakri.logging.ShippedLogback;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the agent writes to its log cannot be forged or flooded by what it reads: a device id with a
 * line break stays on its line; gRPC's own transport warnings (java.util.logging) go through the
 * agent's logging at DEBUG instead of multi-line blocks on stderr. Also: the metrics endpoint binds
 * where the operator says.
 */
class LogHygieneIT {

  private static final Duration WAIT = Duration.ofSeconds(20);

  @TempDir Path tmp;

  @Test
  void aDeviceIdWithALineBreakCannotForgeALogLine() throws Exception {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    try (LogCapture logs = LogCapture.root();
        FaultAgent a = FaultAgent.start(tmp.resolve("agent"), plugins, Duration.ofSeconds(60))) {
      a.writeConfig(
          "cam",
          TestAgent.configuration(
              "cam",
              "simulated",
              1,
              "descriptions:\n- \"cam\\n05:00:00.000 ERROR [main] Agent - forged\\r\\u001b[2K\""));
      await()
          .atMost(WAIT)
          .until(
              () -> logs.messages().stream().anyMatch(m -> m.contains("discovered as instance")));
      ILoggingEvent discovered =
          logs.events().stream()
              .filter(e -> e.getFormattedMessage().contains("discovered as instance"))
              .findFirst()
              .orElseThrow();
      String line;
      // As the shipped text format (the agent's logback.xml) writes it.
      try (ShippedLogback shipped =
          new ShippedLogback(
              LogHygieneIT.class.getClassLoader().getResource("logback.xml"), LogFormat.TEXT)) {
        line = shipped.textLine(discovered);
      }
      assertThat(line).endsWith(System.lineSeparator());
      assertThat(line.strip()).doesNotContain("\n").doesNotContain("\r").doesNotContain("\u001b");
      assertThat(line).contains("cam\\n05:00:00.000 ERROR [main] Agent - forged\\r\\u001b[2K");
    }
  }

  @Test
  void grpcTransportWarningsGoThroughTheAgentsLoggingAtDebug() throws Exception {
    String name = "io.grpc.netty.shaded.io.grpc.netty.NettyServerHandler";
    LogCapture logs = LogCapture.of(name, Level.DEBUG);
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    try (FaultAgent a = FaultAgent.start(tmp.resolve("agent"), plugins, Duration.ofSeconds(60))) {
      System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
      // What gRPC's server handler logs when a peer sends a bad HTTP/2 stream.
      java.util.logging.Logger.getLogger(name)
          .log(
              java.util.logging.Level.WARNING,
              "Stream Error",
              new IllegalStateException("Received DATA frame for an unknown stream 3"));
    } finally {
      System.setErr(err);
      logs.close();
    }
    assertThat(captured.toString(StandardCharsets.UTF_8)).doesNotContain("WARNING");
    assertThat(logs.events())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getLevel()).isEqualTo(Level.DEBUG);
              assertThat(e.getFormattedMessage()).isEqualTo("Stream Error");
              assertThat(e.getThrowableProxy().getMessage()).contains("unknown stream 3");
            });
  }

  /**
   * An OPC UA peer answering garbage, polled again and again: as the shipped logback configuration
   * writes them, at most the handler's own line or two at WARN and above, each bounded, none with a
   * stack trace (the OPC UA library logged one at ERROR on every poll).
   */
  @Test
  void anOpcuaPeerAnsweringGarbageIsNoStackTraceAtEveryPoll() throws Exception {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-opcua.jar");
    AtomicInteger answered = new AtomicInteger();
    try (ServerSocket garbage = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        LogCapture logs = LogCapture.root();
        FaultAgent a = FaultAgent.start(tmp.resolve("agent"), plugins, Duration.ofSeconds(60))) {
      Thread peer =
          new Thread(
              () -> {
                byte[] junk = "ACKF".getBytes(StandardCharsets.US_ASCII);
                while (!garbage.isClosed()) {
                  try (Socket s = garbage.accept()) {
                    // A message header announcing far more than any OPC UA peer may send.
                    s.getOutputStream().write(junk);
                    s.getOutputStream().write(new byte[] {(byte) 0xd8, 0x0b, 0x23, 0x1a});
                    s.getOutputStream().write(new byte[64]);
                    s.getOutputStream().flush();
                    answered.incrementAndGet();
                  } catch (java.io.IOException e) {
                    // closed at the end of the test, or the agent hung up
                  }
                }
              },
              "garbage-opcua-peer");
      peer.setDaemon(true);
      peer.start();
      a.writeConfig(
          "plc",
          TestAgent.configuration(
              "plc",
              "opcua",
              1,
              "opcuaDiscoveryMethod:\n  standard:\n    discoveryUrls:\n    - opc.tcp://127.0.0.1:"
                  + garbage.getLocalPort()
                  + "/\npollIntervalSeconds: 1"));
      await().atMost(Duration.ofSeconds(40)).until(() -> answered.get() >= 3);
      await()
          .atMost(WAIT)
          .until(() -> logs.messages().stream().anyMatch(m -> m.contains("FindServers on")));

      List<ILoggingEvent> written;
      try (ShippedLogback shipped =
          new ShippedLogback(
              LogHygieneIT.class.getClassLoader().getResource("logback.xml"), LogFormat.TEXT)) {
        written =
            logs.events().stream()
                .filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
                .filter(shipped::writes)
                .toList();
      }
      assertThat(written)
          .as("WARN and above as shipped")
          .allMatch(e -> e.getThrowableProxy() == null, "no stack trace")
          .allMatch(e -> e.getFormattedMessage().length() <= LogText.MAX_LINE, "bounded")
          .filteredOn(e -> e.getFormattedMessage().contains("FindServers"))
          .hasSize(1);
      assertThat(written).hasSizeLessThanOrEqualTo(2);
    }
  }

  @Test
  void theMetricsEndpointBindsToTheGivenAddress() throws Exception {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    try (FaultAgent a =
        FaultAgent.start(
            tmp.resolve("agent"),
            plugins,
            Duration.ofSeconds(60),
            Optional.empty(),
            Safeguards.defaults().withMetricsBindAddress("127.0.0.1"),
            0)) {
      assertThat(a.agent.healthAddress()).isPresent();
      assertThat(a.agent.healthAddress().get().getAddress().isLoopbackAddress()).isTrue();
    }
    try (FaultAgent a =
        FaultAgent.start(
            tmp.resolve("agent2"),
            plugins,
            Duration.ofSeconds(60),
            Optional.empty(),
            Safeguards.defaults(),
            0)) {
      assertThat(a.agent.healthAddress().get().getAddress().isAnyLocalAddress())
          .as("default: every interface, as documented")
          .isTrue();
    }
  }
}
