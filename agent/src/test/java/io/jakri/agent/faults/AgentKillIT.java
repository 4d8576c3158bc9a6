package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.TestAgent;
import io.jakri.kubelet.emulator.AdmissionException;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.kubelet.emulator.Pod;
import io.jakri.kubelet.emulator.PodAdmission;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged agent (standalone, a real process) is killed with SIGKILL while Allocates are in
 * flight, {@code jakri.kill.rounds} times (default 3), and started again each time: the sockets the
 * dead process left are cleaned, every resource comes back, no device is held by two live pods, and
 * once the pods are gone every slot can be allocated again.
 */
class AgentKillIT {

  private static final Path JAR = Path.of("target", "jakri-agent.jar").toAbsolutePath();
  private static final int ROUNDS = Integer.getInteger("jakri.kill.rounds", 3);
  private static final String SIM = "example.com/sim";
  private static final int DEVICES = 8;

  @TempDir Path tmp;

  @Test
  void sigkillMidAllocateThenRestartLeavesNoStaleSocketAndNoDoubleUse() throws Exception {
    Path dp = tmp.resolve("dp");
    Path config = Files.createDirectories(tmp.resolve("config"));
    Files.writeString(
        config.resolve("sim.yaml"),
        TestAgent.configuration(
            "sim", "simulated", 1, "count: " + DEVICES + "\nresourceName: " + SIM));
    Path podResources = tmp.resolve("pod-resources").resolve("kubelet.sock");
    Map<String, Set<String>> live = new ConcurrentHashMap<>();
    int recovered = 0;
    int inFlightAtKills = 0;
    int staleFound = 0;
    int staleLeft = 0;
    try (KubeletEmulator kubelet =
        KubeletEmulator.builder(dp).podResourcesSocket(podResources).build()) {
      kubelet.start();
      Process agent = start(dp, config, podResources, 0);
      try {
        awaitServing(kubelet);
        for (int round = 0; round < ROUNDS; round++) {
          Set<String> ownSockets = sockets(dp);
          // Half the pods of earlier rounds are kept: free devices until at least 4 are free, so
          // this round's Allocates can succeed at least 4 times before the ones kept fill them.
          for (String p : live.keySet().stream().sorted().toList()) {
            if (DEVICES - live.values().stream().mapToInt(Set::size).sum() >= 4) {
              break;
            }
            kubelet.removePod("default", p);
            live.remove(p);
          }
          // Hammer Allocate from 4 threads; keep half of the admitted pods.
          AtomicBoolean stop = new AtomicBoolean();
          AtomicInteger inFlight = new AtomicInteger();
          AtomicInteger admittedNow = new AtomicInteger();
          List<Thread> load = new ArrayList<>();
          for (int t = 0; t < 4; t++) {
            int thread = t;
            int r = round;
            Thread th =
                new Thread(
                    () -> {
                      int n = 0;
                      while (!stop.get()) {
                        String pod = "r" + r + "-t" + thread + "-" + n++;
                        inFlight.incrementAndGet();
                        try {
                          PodAdmission p =
                              kubelet.admit(Pod.of("default", pod, Container.of("c", SIM, 1)));
                          admittedNow.incrementAndGet();
                          if (n % 2 == 0) {
                            live.put(pod, Set.copyOf(p.container("c").deviceIds(SIM)));
                          } else {
                            kubelet.removePod("default", pod);
                          }
                        } catch (AdmissionException | RuntimeException e) {
                          java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
                        } finally {
                          inFlight.decrementAndGet();
                        }
                      }
                    });
            th.start();
            load.add(th);
          }
          await().atMost(Duration.ofSeconds(20)).until(() -> admittedNow.get() >= 4);
          // Free some devices so Allocates keep coming when all are taken.
          live.keySet().stream()
              .limit(2)
              .toList()
              .forEach(
                  p -> {
                    kubelet.removePod("default", p);
                    live.remove(p);
                  });
          inFlightAtKills += inFlight.get();
          agent.destroyForcibly(); // SIGKILL
          assertThat(agent.waitFor(20, TimeUnit.SECONDS)).isTrue();
          stop.set(true);
          for (Thread th : load) {
            th.join(20_000);
          }
          Map<String, Object> stale = socketInodes(dp);
          stale.remove("kubelet.sock");
          staleFound += stale.size();
          assertThat(stale).as("the killed agent leaves its sockets").isNotEmpty();
          await()
              .atMost(Duration.ofSeconds(10))
              .until(() -> kubelet.allocatable().getOrDefault(SIM, -1L) == 0);

          long registrations = kubelet.registrations();
          agent = start(dp, config, podResources, round + 1);
          await()
              .atMost(Duration.ofSeconds(30))
              .until(() -> kubelet.registrations() >= registrations + DEVICES + 1);
          awaitServing(kubelet);
          // No socket file of the dead process is left (a new one may reuse a name, not the file).
          Map<String, Object> after = socketInodes(dp);
          assertThat(after).containsKey("kubelet.sock");
          for (Map.Entry<String, Object> e : stale.entrySet()) {
            if (e.getValue().equals(after.get(e.getKey()))) {
              // Left behind by the dead process: nobody listens on it, the kubelet never dials it.
              staleLeft++;
              assertThat(connectable(dp.resolve(e.getKey()))).as(e.getKey()).isFalse();
              // The restarted agent removes them (StaleSockets) before it serves.
              assertThat(after.get(e.getKey())).as("stale socket " + e.getKey()).isNull();
            }
          }
          assertThat(after.size()).isGreaterThanOrEqualTo(ownSockets.size());
          assertNoDoubleUse(live);
          recovered++;
        }
        // Fill every free device: still no device held twice.
        int free = DEVICES - live.values().stream().mapToInt(Set::size).sum();
        for (int i = 0; i < free; i++) {
          PodAdmission p = kubelet.admit(Pod.of("default", "fill-" + i, Container.of("c", SIM, 1)));
          live.put("fill-" + i, Set.copyOf(p.container("c").deviceIds(SIM)));
        }
        assertNoDoubleUse(live);
        // Pods gone: within the reclaim grace every slot is allocatable again in one pod.
        live.keySet().forEach(p -> kubelet.removePod("default", p));
        await()
            .atMost(Duration.ofSeconds(30))
            .ignoreExceptions()
            .until(
                () ->
                    kubelet
                            .admit(Pod.of("default", "all", Container.of("c", SIM, DEVICES)))
                            .container("c")
                            .deviceIds(SIM)
                            .size()
                        == DEVICES);
      } finally {
        agent.destroyForcibly();
        agent.waitFor(20, TimeUnit.SECONDS);
      }
    }
    System.out.printf(
        "AGENT-KILL %d SIGKILLs with %d Allocates in flight in total; %d sockets left by the dead"
            + " agent, %d of them still there (dead) after the restart%n",
        ROUNDS, inFlightAtKills, staleFound, staleLeft);
    System.out.printf("FAULT agent-sigkill cases=%d recovered=%d lost=0%n", ROUNDS, recovered);
  }

  /**
   * Issue 26.7: an agent killed while serving (SIGKILL, no shutdown) leaves its device-plugin
   * sockets and its CDI specs; the next start removes them before it serves, and writes specs only
   * for what it serves now (a Configuration of another name here, so no file of the dead agent can
   * pass for one of the new one's). Both directories are temp dirs, never the node's.
   */
  @Test
  void sigkillWhileServingLeavesCdiSpecsAndSocketsThatTheNextStartRemoves() throws Exception {
    Path dp = tmp.resolve("dp");
    Path cdi = tmp.resolve("cdi");
    Path config = Files.createDirectories(tmp.resolve("config"));
    Files.writeString(
        config.resolve("old.yaml"),
        TestAgent.configuration("old", "simulated", 1, "count: " + DEVICES));
    Path podResources = tmp.resolve("pod-resources").resolve("kubelet.sock");
    try (KubeletEmulator kubelet =
        KubeletEmulator.builder(dp).podResourcesSocket(podResources).build()) {
      kubelet.start();
      Process agent = start(dp, config, podResources, 0, "--cdi", "--cdi-dir", cdi.toString());
      try {
        await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () ->
                    kubelet.allocatable().getOrDefault("akri.sh/old", 0L) == DEVICES
                        && specs(cdi).size() == DEVICES);
        Set<String> deadSpecs = specs(cdi);
        Map<String, Object> deadSockets = socketInodes(dp);
        deadSockets.remove("kubelet.sock");
        agent.destroyForcibly(); // SIGKILL
        assertThat(agent.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(specs(cdi)).as("the killed agent leaves its specs").isEqualTo(deadSpecs);
        assertThat(socketInodes(dp)).as("and its sockets").containsAllEntriesOf(deadSockets);
        assertThat(deadSockets).hasSize(DEVICES + 1); // an Instance resource each, and the class

        Files.delete(config.resolve("old.yaml"));
        Files.writeString(
            config.resolve("new.yaml"), TestAgent.configuration("new", "simulated", 1, "count: 1"));
        agent = start(dp, config, podResources, 1, "--cdi", "--cdi-dir", cdi.toString());
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> kubelet.allocatable().getOrDefault("akri.sh/new", 0L) == 1);
        Set<String> specsNow = specs(cdi);
        assertThat(specsNow).hasSize(1).allMatch(f -> f.startsWith("akri.sh-new-"));
        Map<String, Object> socketsNow = socketInodes(dp);
        deadSockets.forEach(
            (name, inode) ->
                assertThat(socketsNow.get(name)).as("dead socket " + name).isNotEqualTo(inode));
        assertThat(socketsNow).hasSize(3); // kubelet.sock, the Instance and the class resource
      } finally {
        agent.destroyForcibly();
        agent.waitFor(20, TimeUnit.SECONDS);
      }
    }
  }

  /** The CDI spec files in {@code dir}. */
  private static Set<String> specs(Path dir) throws Exception {
    if (!Files.isDirectory(dir)) {
      return Set.of();
    }
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(n -> n.startsWith("akri.sh-") && n.endsWith(".json"))
          .collect(Collectors.toCollection(java.util.TreeSet::new));
    }
  }

  private static void assertNoDoubleUse(Map<String, Set<String>> live) {
    Map<String, String> holder = new HashMap<>();
    live.forEach(
        (pod, ids) ->
            ids.forEach(
                id ->
                    assertThat(holder.putIfAbsent(id, pod))
                        .as("device " + id + " held by two live pods")
                        .isNull()));
  }

  private Process start(Path dp, Path config, Path podResources, int n, String... extra)
      throws Exception {
    List<String> command = new ArrayList<>();
    command.addAll(
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-jar",
            JAR.toString(),
            "--standalone",
            "--config",
            config.toString(),
            "--device-plugin-dir",
            dp.toString(),
            "--pod-resources-socket",
            podResources.toString(),
            "--node-name",
            "node-a",
            "--reclaim-grace",
            "2s",
            "--plugins-dir",
            FaultAgent.PACKAGED_PLUGINS.toString(),
            "--discovery-handlers-dir",
            dp.resolveSibling("akri").toString()));
    command.addAll(List.of(extra));
    return new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(tmp.resolve("agent-" + n + ".log").toFile())
        .start();
  }

  private static void awaitServing(KubeletEmulator kubelet) {
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                kubelet.allocatable().getOrDefault(SIM, 0L) == DEVICES
                    && kubelet.registeredResources().size() == DEVICES + 1);
  }

  private static boolean connectable(Path socket) {
    try (java.nio.channels.SocketChannel channel =
        java.nio.channels.SocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
      channel.connect(java.net.UnixDomainSocketAddress.of(socket));
      return true;
    } catch (java.io.IOException e) {
      return false;
    }
  }

  /** Socket file name to its inode (file key). */
  private static Map<String, Object> socketInodes(Path dir) throws Exception {
    Map<String, Object> result = new HashMap<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path p : files.toList()) {
        if (p.getFileName().toString().endsWith(".sock")) {
          result.put(
              p.getFileName().toString(),
              Files.readAttributes(p, java.nio.file.attribute.BasicFileAttributes.class).fileKey());
        }
      }
    }
    return result;
  }

  private static Set<String> sockets(Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".sock"))
          .collect(Collectors.toCollection(java.util.TreeSet::new));
    }
  }
}
