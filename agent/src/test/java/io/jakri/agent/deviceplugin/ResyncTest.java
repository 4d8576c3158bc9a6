package io.jakri.agent.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import io.jakri.kubelet.v1beta1.Device;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link KubeletRegistrar.Resync} on a directory of plain files standing in for the sockets (it
 * only looks whether they exist and which file the kubelet's is); servers are built but never
 * started.
 */
class ResyncTest {

  private static EventLoopGroup group;

  @TempDir Path dir;

  private final Map<String, ServedResource> entries = new ConcurrentHashMap<>();
  private final Map<String, ServedResource> bySocket = new HashMap<>();
  private final List<Runnable> control = new ArrayList<>();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final List<String> servedAgain = new ArrayList<>();
  private final List<String> registered = new ArrayList<>();
  private final List<DevicePluginReport> events = new ArrayList<>();
  private KubeletRegistrar.Resync resync;

  @BeforeAll
  @SuppressWarnings("deprecation")
  static void group() {
    group = new EpollEventLoopGroup(1);
  }

  @AfterAll
  static void closeGroup() throws InterruptedException {
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
  }

  @BeforeEach
  void setUp() {
    resync =
        new KubeletRegistrar.Resync(
            new KubeletRegistrar(
                dir,
                group,
                Runnable::run,
                entries,
                null, // Resync never registers through it
                control::add,
                closed::get,
                (entry, round) -> {},
                entry -> servedAgain.add(entry.resource()),
                entry -> registered.add(entry.resource()),
                events::add),
            bySocket);
  }

  /** A resource served (or not, without a socket) as the manager would have it. */
  private ServedResource served(String name, boolean socket) throws Exception {
    ServedResource entry = new ServedResource(new Backend("test.jakri.io/" + name, name));
    entries.put(entry.resource(), entry);
    if (socket) {
      Path file = Files.createFile(dir.resolve(name + "-1.sock"));
      entry.server = new ResourceServer(entry.backend, file, group, Runnable::run, event -> {});
      bySocket.put(entry.server.endpoint(), entry);
    }
    return entry;
  }

  /** A kubelet (re)starting: its socket file is a new file. */
  private void kubeletStarts() throws Exception {
    Path fresh = Files.createFile(dir.resolve("kubelet.sock.new"));
    Files.move(
        fresh, dir.resolve(KubeletRegistrar.KUBELET_SOCKET), StandardCopyOption.REPLACE_EXISTING);
  }

  @Test
  void aNewKubeletIsAnnouncedAndEveryServingResourceRegistersWithIt() throws Exception {
    ServedResource serving = served("a", true);
    ServedResource starting = served("b", false);
    starting.starting = true;
    ServedResource queued = served("c", false);
    queued.queued = true;

    kubeletStarts();
    resync.run();
    assertThat(events).containsExactly(new DevicePluginReport.KubeletRestarted(1));
    assertThat(registered).containsExactly("test.jakri.io/a");
    assertThat(servedAgain).isEmpty(); // their starts register them when they complete

    serving.registeredGeneration = 1;
    resync.run();
    assertThat(events).hasSize(1); // the same kubelet
    assertThat(registered).hasSize(1);

    kubeletStarts();
    serving.inFlightGeneration = 2; // a Register to the new kubelet is already out
    resync.run();
    assertThat(events).last().isEqualTo(new DevicePluginReport.KubeletRestarted(2));
    assertThat(registered).hasSize(1);
  }

  @Test
  void resourcesWithoutTheirSocketAreServedAgain() throws Exception {
    ServedResource vanished = served("a", true);
    vanished.registeredGeneration = 1;
    Files.delete(vanished.server.socket());
    ServedResource failed = served("b", false); // its last start failed
    ServedResource fine = served("c", true);
    fine.registeredGeneration = 0; // no kubelet yet: generation 0

    resync.run();
    assertThat(servedAgain).containsExactlyInAnyOrder("test.jakri.io/a", "test.jakri.io/b");
    assertThat(vanished.registeredGeneration).isEqualTo(-1);
    assertThat(registered).isEmpty();
    assertThat(events).isEmpty();
  }

  @Test
  void aDeletedSocketServesAgainOnlyTheResourceStillOnIt() throws Exception {
    ServedResource deleted = served("a", true);
    deleted.registeredGeneration = 1;
    ServedResource untouched = served("b", true);
    ServedResource recreated = served("c", true); // its file deleted and created again since
    ServedResource retired = served("d", true);
    entries.remove(retired.resource());
    Files.delete(deleted.server.socket());
    Files.delete(retired.server.socket());

    resync.socketsDeleted(
        Set.of(
            deleted.server.endpoint(),
            recreated.server.endpoint(),
            retired.server.endpoint(),
            "unknown-1.sock"));
    assertThat(servedAgain).containsExactly("test.jakri.io/a");
    assertThat(deleted.registeredGeneration).isEqualTo(-1);
    assertThat(untouched.registeredGeneration).isEqualTo(-1);

    deleted.starting = true; // its new start is under way
    resync.socketsDeleted(Set.of(deleted.server.endpoint()));
    assertThat(servedAgain).hasSize(1);
  }

  @Test
  void requestsBeforeTheResyncRunsJoinIt() throws Exception {
    kubeletStarts();
    resync.request();
    resync.request();
    resync.request();
    assertThat(control).hasSize(1);
    control.remove(0).run();
    assertThat(events).containsExactly(new DevicePluginReport.KubeletRestarted(1));

    resync.request();
    assertThat(control).hasSize(1);
  }

  @Test
  void nothingHappensOnceClosed() throws Exception {
    ServedResource vanished = served("a", true);
    Files.delete(vanished.server.socket());
    kubeletStarts();
    closed.set(true);

    resync.request();
    resync.run();
    resync.socketsDeleted(Set.of(vanished.server.endpoint()));
    assertThat(control).isEmpty();
    assertThat(events).isEmpty();
    assertThat(servedAgain).isEmpty();
  }

  private record Backend(String resourceName, String socketStem) implements ResourceBackend {
    @Override
    public List<Device> devices() {
      return List.of();
    }

    @Override
    public List<String> preferredAllocation(
        List<String> available, List<String> mustInclude, int size) {
      return List.of();
    }

    @Override
    public ContainerAllocateResponse allocate(List<String> deviceIds) {
      return ContainerAllocateResponse.getDefaultInstance();
    }
  }
}
