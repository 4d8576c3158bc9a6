package io.jakri.handler.udev;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.testkit.PluginJar;
import io.jakri.handler.testkit.RecordingListener;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged plugin against this machine's real kernel, {@code /sys} and {@code /dev}: zram disks
 * hot-added and removed, loop devices attached with {@code losetup}, {@code /dev/null}, the virtio
 * disk under its PCI parent. A missing facility fails under {@code CI=true}, skips elsewhere.
 */
class UdevKernelIT {

  private static final Duration SOON = Duration.ofSeconds(10);
  private static final String VDA = "/sys/class/block/vda";

  @TempDir static Path plugins;
  private static PluginJar jar;
  private static DiscoveryHandler handler;

  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final List<AutoCloseable> cleanUp = new ArrayList<>();

  @BeforeAll
  static void load() throws IOException {
    jar = PluginJar.loadPackaged(plugins);
    handler = jar.handler();
  }

  @AfterAll
  static void unload() {
    jar.close();
  }

  @AfterEach
  void tearDown() throws Exception {
    for (int i = cleanUp.size() - 1; i >= 0; i--) {
      cleanUp.get(i).close();
    }
    scheduler.shutdownNow();
  }

  private RecordingListener discover(String details) throws Exception {
    return discover(details, Map.of());
  }

  private RecordingListener discover(String details, Map<String, String> properties)
      throws Exception {
    RecordingListener listener = new RecordingListener();
    Discovery d =
        handler.start(
            new DiscoveryContext("udev-it", "node-a", details, properties, scheduler), listener);
    cleanUp.add(d);
    await().atMost(SOON).until(() -> listener.last().isPresent());
    return listener;
  }

  private static String rules(String... rules) {
    StringBuilder b = new StringBuilder("udevRules:\n");
    for (String r : rules) {
      b.append("- '").append(r).append("'\n");
    }
    return b.toString();
  }

  private static Optional<DiscoveredDevice> device(RecordingListener l, String id) {
    return l.last().orElseThrow().stream().filter(d -> d.id().equals(id)).findFirst();
  }

  private static String devpathOf(String sysClassPath) throws IOException {
    return "/" + Path.of("/sys").relativize(Path.of(sysClassPath).toRealPath());
  }

  @Test
  void devNullAsInAkrisEndToEndExample() throws Exception {
    require(Files.exists(Path.of("/sys/class/mem/null")), "/sys/class/mem/null");
    RecordingListener l = discover(rules("KERNEL==\"null\"") + "permissions: rwm\n");

    assertThat(l.last().orElseThrow())
        .containsExactly(
            new DiscoveredDevice(
                "/devices/virtual/mem/null",
                Map.of("UDEV_DEVNODE", "/dev/null", "UDEV_DEVPATH", "/devices/virtual/mem/null"),
                List.of(),
                List.of(new DiscoveredDevice.DeviceSpec("/dev/null", "/dev/null", "rwm")),
                Map.of(),
                Optional.empty(),
                false));
    assertThat(l.failures()).isEmpty();
  }

  @Test
  void zramDiskHotAddedAppearsAtOnceAndVanishesAtOnceOnRemoval() throws Exception {
    require(ZramDisk.available(), "root and /sys/class/zram-control (CONFIG_ZRAM)");
    // A rescan interval of an hour: only the /dev events can explain the changes.
    RecordingListener l =
        discover(
            rules("SUBSYSTEM==\"block\", KERNEL==\"zram*\"")
                + "permissions: rw\nrescanIntervalSeconds: 3600\n");
    ZramDisk zram = ZramDisk.add();
    cleanUp.add(zram);

    await("zram disk " + zram.name() + " discovered")
        .atMost(SOON)
        .until(() -> device(l, zram.devpath()).isPresent());
    DiscoveredDevice d = device(l, zram.devpath()).orElseThrow();
    assertThat(d.properties())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("UDEV_DEVNODE", zram.devnode(), "UDEV_DEVPATH", zram.devpath()));
    assertThat(d.deviceSpecs())
        .containsExactly(new DiscoveredDevice.DeviceSpec(zram.devnode(), zram.devnode(), "rw"));
    assertThat(d.shared()).isFalse();
    assertThat(l.last().orElseThrow())
        .extracting(DiscoveredDevice::id)
        .allMatch(id -> id.startsWith("/devices/virtual/block/zram"));

    zram.remove();
    await("zram disk " + zram.name() + " gone")
        .atMost(SOON)
        .until(() -> device(l, zram.devpath()).isEmpty());
    assertThat(l.failures()).isEmpty();
  }

  @Test
  void ancestorAttributeMatchesTheVirtioDiskOnlyThroughItsPciParent() throws Exception {
    require(Files.exists(Path.of(VDA)), VDA + " (a virtio disk)");
    String vda = devpathOf(VDA);
    RecordingListener plural = discover(rules("SUBSYSTEM==\"block\", ATTRS{vendor}==\"0x1af4\""));
    assertThat(plural.last().orElseThrow())
        .extracting(DiscoveredDevice::id)
        .contains(vda)
        .noneMatch(id -> id.contains("/loop") || id.contains("/zram"))
        .allMatch(id -> id.startsWith(vda.substring(0, vda.indexOf("/virtio"))));
    // The disk itself has no vendor attribute: the singular ATTR finds nothing.
    RecordingListener singular = discover(rules("SUBSYSTEM==\"block\", ATTR{vendor}==\"0x1af4\""));
    assertThat(singular.last().orElseThrow()).isEmpty();
  }

  @Test
  void exclusionsWithNotEqual() throws Exception {
    require(Files.exists(Path.of(VDA)), VDA + " (a virtio disk)");
    String vda = devpathOf(VDA);
    RecordingListener noLoops = discover(rules("SUBSYSTEM==\"block\", KERNEL!=\"loop[0-9]*\""));
    assertThat(noLoops.last().orElseThrow())
        .extracting(DiscoveredDevice::id)
        .contains(vda)
        .noneMatch(id -> id.contains("/loop"));
    RecordingListener notVirtio =
        discover(rules("SUBSYSTEM==\"block\", DRIVERS!=\"virtio_blk\", KERNEL==\"vd*\""));
    assertThat(notVirtio.last().orElseThrow()).isEmpty();
    RecordingListener notBlock = discover(rules("KERNEL==\"vda\", SUBSYSTEM!=\"bl*\""));
    assertThat(notBlock.last().orElseThrow()).isEmpty();
    RecordingListener readOnly = discover(rules("KERNEL==\"vda\", ATTR{ro}!=\"0\""));
    assertThat(readOnly.last().orElseThrow()).isEmpty();
    RecordingListener writable = discover(rules("KERNEL==\"vda\", ATTR{ro}!=\"1\""));
    assertThat(writable.last().orElseThrow()).extracting(DiscoveredDevice::id).containsExactly(vda);
  }

  @Test
  void loopDeviceAttachedWithLosetupIsFoundByItsBackingFileUntilDetached(@TempDir Path dir)
      throws Exception {
    require(LoopDevice.available(), "root and losetup (util-linux)");
    Path backing = dir.resolve("udev-it-loop.img");
    try (var f = new java.io.RandomAccessFile(backing.toFile(), "rw")) {
      f.setLength(1 << 20);
    }
    RecordingListener l =
        discover(
            rules(
                    "SUBSYSTEM==\"block\", KERNEL==\"loop*\", ATTR{loop/backing_file}==\""
                        + backing
                        + "\"")
                + "rescanIntervalSeconds: 1\n");
    assertThat(l.last().orElseThrow()).isEmpty();
    LoopDevice loop = LoopDevice.attach(backing);
    boolean[] detached = {false};
    cleanUp.add(
        () -> {
          if (!detached[0]) {
            loop.close();
          }
        });
    String devpath = devpathOf("/sys/class/block/" + loop.name());
    await("loop device " + loop.devnode)
        .atMost(SOON)
        .until(() -> l.lastIds().equals(List.of(devpath)));
    assertThat(device(l, devpath).orElseThrow().properties())
        .containsEntry("UDEV_DEVNODE", loop.devnode);

    loop.close();
    detached[0] = true;
    // Detaching changes only an attribute (no node event): the periodic rescan notices.
    await("loop device detached").atMost(SOON).until(() -> l.lastIds().isEmpty());
  }

  @Test
  void groupRecursiveGathersTheVirtioDiskUnderItsPciDevice() throws Exception {
    require(Files.exists(Path.of(VDA)), VDA + " (a virtio disk)");
    String vda = devpathOf(VDA);
    // The PCI device has no node: Akri maps it to its nearest ancestor with one (none), so it
    // stays itself; the disk below it joins its group.
    String pci = vda.substring(0, vda.indexOf("/virtio"));
    String pciName = pci.substring(pci.lastIndexOf('/') + 1);
    RecordingListener l =
        discover(
            rules("KERNEL==\"" + pciName + "\"", "KERNEL==\"vda\"") + "groupRecursive: true\n");
    assertThat(l.lastIds()).containsExactly(pci);
    DiscoveredDevice d = l.last().orElseThrow().get(0);
    assertThat(d.properties())
        .containsEntry("UDEV_DEVPATH", pci)
        .containsEntry("UDEV_DEVNODE_1", "/dev/vda")
        .doesNotContainKey("UDEV_DEVNODE_0")
        .doesNotContainKey("UDEV_DEVNODE");
    assertThat(d.deviceSpecs())
        .containsExactly(new DiscoveredDevice.DeviceSpec("/dev/vda", "/dev/vda", "rwm"));
  }

  @Test
  void pciResourceFromDevicePluginResourceName() throws Exception {
    require(Files.exists(Path.of(VDA)), VDA + " (a virtio disk)");
    String vda = devpathOf(VDA);
    String pci = vda.substring(0, vda.indexOf("/virtio"));
    RecordingListener l =
        discover(
            rules("KERNEL==\"vda\""),
            Map.of("devicePluginResourceName", " example.com/my-disk ", "vfioPassthrough", "true"));
    DiscoveredDevice d = l.last().orElseThrow().get(0);
    assertThat(d.properties())
        .containsEntry("PCI_RESOURCE_EXAMPLE_COM_MY-DISK", pci.substring(pci.lastIndexOf('/') + 1));
    // No IOMMU group on this virtio disk's path: no VFIO specs.
    assertThat(d.deviceSpecs())
        .extracting(DiscoveredDevice.DeviceSpec::hostPath)
        .containsExactly("/dev/vda");
  }

  @Test
  void enumeratorFiltersAgreeWithUdevadm() throws Exception {
    require(KernelFacility.installed("udevadm"), "udevadm (Debian package udev)");
    record Case(String rule, List<String> udevadm) {}
    List<Case> cases =
        List.of(
            new Case("SUBSYSTEM==\"block\"", List.of("--subsystem-match=block")),
            new Case(
                "SUBSYSTEM==\"block\", KERNEL==\"loop[0-3]\"",
                List.of("--subsystem-match=block", "--sysname-match=loop[0-3]")),
            new Case(
                "SUBSYSTEM==\"mem\", KERNEL==\"*u*\"",
                List.of("--subsystem-match=mem", "--sysname-match=*u*")),
            new Case(
                "KERNEL==\"tty?\", SUBSYSTEM!=\"block\"",
                List.of("--sysname-match=tty?", "--subsystem-nomatch=block")),
            new Case(
                "SUBSYSTEM==\"block\", ATTR{ro}==\"0\", ATTR{removable}!=\"1\"",
                List.of(
                    "--subsystem-match=block", "--attr-match=ro=0", "--attr-nomatch=removable=1")));
    for (Case c : cases) {
      List<String> command =
          new ArrayList<>(List.of("udevadm", "trigger", "--dry-run", "--verbose"));
      command.addAll(c.udevadm());
      // Only devices with a node: Akri reports the others as their nearest ancestor with one.
      command.add("--property-match=DEVNAME=?*");
      List<String> expected =
          KernelFacility.run(command)
              .lines()
              .filter(s -> s.startsWith("/sys/"))
              .map(s -> s.substring("/sys".length()))
              .sorted()
              .toList();
      RecordingListener l = discover(rules(c.rule() + ", ENV{DEVNAME}==\"?*\""));
      assertThat(l.lastIds())
          .as(c.rule())
          .isNotEmpty()
          .containsExactlyInAnyOrderElementsOf(expected);
    }
  }

  @Test
  void ancestorWalkAgreesWithUdevadmInfo() throws Exception {
    require(KernelFacility.installed("udevadm"), "udevadm (Debian package udev)");
    require(Files.exists(Path.of(VDA)), VDA + " (a virtio disk)");
    String vda = devpathOf(VDA);
    String info = KernelFacility.run(List.of("udevadm", "info", "--attribute-walk", VDA));
    // One rule per ancestor udevadm lists: its KERNELS, SUBSYSTEMS and DRIVERS must match vda.
    List<String> ancestorRules = new ArrayList<>();
    List<String> attributeFilters = new ArrayList<>();
    String kernels = null;
    String subsystems = null;
    for (String line : info.lines().map(String::strip).toList()) {
      if (line.startsWith("KERNELS==")) {
        kernels = line;
      } else if (line.startsWith("SUBSYSTEMS==")) {
        subsystems = line;
      } else if (line.startsWith("DRIVERS==")) {
        // Akri skips an ancestor without a subsystem or driver (udev would match "" there).
        String rule = "KERNEL==\"vda\", " + kernels;
        if (!subsystems.equals("SUBSYSTEMS==\"\"")) {
          rule += ", " + subsystems;
        }
        if (!line.equals("DRIVERS==\"\"")) {
          rule += ", " + line;
        }
        ancestorRules.add(rule);
      } else if (line.matches("ATTR\\{[A-Za-z0-9_/]+\\}==\"[A-Za-z0-9 _:.-]*\"")
          && attributeFilters.size() < 40) {
        attributeFilters.add(line);
      }
    }
    assertThat(ancestorRules).as(info).hasSizeGreaterThanOrEqualTo(2);
    for (String rule : ancestorRules) {
      assertThat(discover(rules(rule)).lastIds()).as(rule).containsExactly(vda);
    }
    String allAttributes = "KERNEL==\"vda\", " + String.join(", ", attributeFilters);
    assertThat(discover(rules(allAttributes)).lastIds()).as(allAttributes).containsExactly(vda);
    assertThat(discover(rules("KERNEL==\"vda\", KERNELS==\"no-such-parent\"")).lastIds()).isEmpty();
  }

  private static void require(boolean available, String what) {
    KernelFacility.require(available, what);
  }
}
