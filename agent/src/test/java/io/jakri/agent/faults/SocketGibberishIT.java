package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.jakri.agent.PluginJars;
import io.jakri.agent.TestAgent;
import io.jakri.agent.testplugins.MisbehavingHandlers;
import io.jakri.crd.InstanceNames;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.EmulatorListener;
import io.jakri.kubelet.emulator.Pod;
import io.jakri.kubelet.v1beta1.DevicePluginGrpc;
import io.jakri.kubelet.v1beta1.Empty;
import io.jakri.kubelet.v1beta1.ListAndWatchResponse;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Gibberish on the device-plugin sockets and on the (emulated) kubelet socket — random bytes,
 * half-open connections, an HTTP/2 preface and then silence, ListAndWatch clients that never read —
 * neither stops the agent nor disturbs the kubelet's own streams and allocations.
 */
class SocketGibberishIT {

  private static final String SIM = "example.com/sim";
  private static final byte[] PREFACE =
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  @TempDir Path tmp;

  @Test
  void gibberishHalfOpenAndStuckClientsLeaveTheAgentServing() throws Exception {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    PluginJars.plugin(
        plugins.resolve("flap.jar"),
        "flap",
        ">=0.1.0",
        List.of(MisbehavingHandlers.Flapping.class));
    SplittableRandom random = new SplittableRandom(10);
    try (FaultAgent a = FaultAgent.start(tmp.resolve("agent"), plugins, Duration.ofSeconds(60))) {
      a.writeConfig(
          "sim", TestAgent.configuration("sim", "simulated", 1, "count: 2\nresourceName: " + SIM));
      a.writeConfig(
          "flap", TestAgent.configuration("flap", "flapping", 1, "ticks: 100000000\nend: present"));
      String flap = "akri.sh/" + InstanceNames.instanceName("flap", "flap", true, "node-a");
      a.awaitAllocatable(SIM, 2, Duration.ofSeconds(20));
      await().atMost(Duration.ofSeconds(20)).until(() -> a.allocatable(flap) >= 0);
      Path simSocket = a.agent.devicePlugins().socketOf(SIM).orElseThrow();
      Path flapSocket = a.agent.devicePlugins().socketOf(flap).orElseThrow();
      Path kubeletSocket = a.kubelet().kubeletSocket();

      // Sockets are not writable (connectable) by group or others.
      for (Path socket : List.of(simSocket, flapSocket)) {
        Set<PosixFilePermission> mode = Files.getPosixFilePermissions(socket);
        assertThat(mode)
            .as("permissions of " + socket.getFileName())
            .doesNotContain(PosixFilePermission.OTHERS_WRITE, PosixFilePermission.GROUP_WRITE);
      }

      Counting counting = new Counting();
      a.kubelet().addListener(counting);
      long fdsBefore = FaultAgent.openFds();
      int cases = 0;

      // 1. Random bytes, then close: 150 connections per socket.
      for (Path socket : List.of(simSocket, flapSocket, kubeletSocket)) {
        for (int i = 0; i < 150; i++) {
          byte[] junk = new byte[1 + random.nextInt(32 * 1024)];
          random.nextBytes(junk);
          if (i % 3 == 0) {
            System.arraycopy(PREFACE, 0, junk, 0, Math.min(PREFACE.length, junk.length));
          }
          sendAndClose(socket, junk);
          cases++;
        }
      }

      // 2. Half-open connections held open (silent, or a preface then silence).
      List<SocketChannel> held = new ArrayList<>();
      for (Path socket : List.of(simSocket, kubeletSocket)) {
        for (int i = 0; i < 50; i++) {
          SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
          channel.connect(UnixDomainSocketAddress.of(socket));
          if (i % 2 == 0) {
            channel.write(ByteBuffer.wrap(PREFACE));
          }
          held.add(channel);
          cases++;
        }
      }

      // 3. ListAndWatch clients that never read, on the flapping resource (10 updates a second).
      List<ManagedChannel> stuck = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        ManagedChannel channel =
            Grpc.newChannelBuilder("unix:" + flapSocket, InsecureChannelCredentials.create())
                .build();
        ClientCall<Empty, ListAndWatchResponse> call =
            channel.newCall(DevicePluginGrpc.getListAndWatchMethod(), CallOptions.DEFAULT);
        call.start(new ClientCall.Listener<>() {}, new Metadata());
        call.sendMessage(Empty.getDefaultInstance());
        call.halfClose();
        // No call.request(n): the client never reads a message.
        stuck.add(channel);
        cases++;
      }

      // Meanwhile the kubelet's own streams keep flowing and allocations keep working.
      long updatesBefore = counting.updates(flap);
      for (int i = 0; i < 20; i++) {
        var admission = a.kubelet().admit(Pod.of("default", "p" + i, Container.of("c", SIM, 1)));
        assertThat(admission.container("c").envs()).containsKey("EXAMPLECOM_SIM_NUM_DEVICES");
        a.kubelet().removePod("default", "p" + i);
      }
      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> counting.updates(flap) > updatesBefore + 10);
      assertThat(a.allocatable(SIM)).isEqualTo(2);
      assertThat(a.agent.devicePlugins().kubeletReachable()).isTrue();

      for (ManagedChannel channel : stuck) {
        channel.shutdownNow();
      }
      for (SocketChannel channel : held) {
        channel.close();
      }
      // Connections closed by the peer are released: no fd leak in the agent.
      await()
          .atMost(Duration.ofSeconds(20))
          .untilAsserted(() -> assertThat(FaultAgent.openFds()).isLessThan(fdsBefore + 40));
      // And the kubelet still allocates afterwards.
      var after = a.kubelet().admit(Pod.of("default", "after", Container.of("c", SIM, 2)));
      assertThat(after.container("c").envs()).containsEntry("EXAMPLECOM_SIM_NUM_DEVICES", "2");
      System.out.printf(
          "GIBBERISH fds before %d, after %d; flap updates seen by the kubelet meanwhile %d%n",
          fdsBefore, FaultAgent.openFds(), counting.updates(flap) - updatesBefore);
      System.out.printf("FAULT socket-gibberish cases=%d recovered=%d lost=0%n", cases, cases);
    }
  }

  private static void sendAndClose(Path socket, byte[] bytes) throws IOException {
    try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      channel.connect(UnixDomainSocketAddress.of(socket));
      ByteBuffer buffer = ByteBuffer.wrap(bytes);
      try {
        while (buffer.hasRemaining()) {
          channel.write(buffer);
        }
      } catch (IOException e) {
        // The server may close on garbage before everything is written: that is a fine answer.
      }
    }
  }

  /** Counts ListAndWatch messages per resource. */
  private static final class Counting implements EmulatorListener {
    private final Map<String, AtomicLong> updates = new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public void snapshot(String resource, Map<String, String> devices) {
      updates.computeIfAbsent(resource, r -> new AtomicLong()).incrementAndGet();
    }

    long updates(String resource) {
      return updates.getOrDefault(resource, new AtomicLong()).get();
    }
  }
}
