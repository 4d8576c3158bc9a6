package io.jakri.handler.udev;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.InvalidDetailsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The device model and Akri's device contract on a sysfs-shaped tree (USB camera, PCI GPU with an
 * IOMMU group, a udev database, broken entries) that this machine's real sysfs lacks. The real
 * sysfs is covered by {@code UdevKernelIT}.
 */
class UdevScannerTest {

  static final String XHCI = "/devices/pci0000:00/0000:00:14.0";
  static final String USB1 = XHCI + "/usb1";
  static final String CAM = USB1 + "/1-1";
  static final String IFACE = CAM + "/1-1:1.0";
  static final String VIDEO = IFACE + "/video4linux/video0";
  static final String GPU = "/devices/pci0000:00/0000:01:00.0";
  static final String CARD = GPU + "/drm/card0";

  @TempDir Path root;
  FakeSysfs fs;
  Path udevData;

  @BeforeEach
  void tree() throws Exception {
    fs = new FakeSysfs(root);
    fs.device(XHCI, "PCI_ID=8086:A36D\n", "bus/pci", "xhci_hcd");
    fs.attribute(XHCI, "vendor", "0x8086\n");
    fs.device(USB1, "DEVNAME=bus/usb/001/001\nMAJOR=189\nMINOR=0\n", "bus/usb", "usb");
    fs.attribute(USB1, "idVendor", "1d6b\n");
    fs.device(CAM, "DEVNAME=bus/usb/001/002\nMAJOR=189\nMINOR=1\n", "bus/usb", "usb");
    fs.attribute(CAM, "idVendor", "046d\n");
    fs.device(IFACE, "DEVTYPE=usb_interface\n", "bus/usb", "uvcvideo");
    fs.device(VIDEO, "MAJOR=81\nMINOR=0\nDEVNAME=video0\n", "class/video4linux", null);
    fs.attribute(VIDEO, "name", "Cam\n");
    fs.device(GPU, "PCI_ID=10DE:1EB8\n", "bus/pci", "vfio-pci");
    fs.attribute(GPU, "vendor", "0x10de\n");
    fs.link(GPU.substring(1) + "/iommu_group", fs.sys.resolve("kernel/iommu_groups/12"));
    fs.device(CARD, "MAJOR=226\nMINOR=0\nDEVNAME=dri/card0\n", "class/drm", null);
    fs.entry("bus/pci/devices", XHCI);
    fs.entry("bus/pci/devices", GPU);
    fs.entry("bus/usb/devices", USB1);
    fs.entry("bus/usb/devices", CAM);
    fs.entry("bus/usb/devices", IFACE);
    fs.entry("class/video4linux", VIDEO);
    fs.entry("class/drm", CARD);
    // Broken entries: a symlink loop, a link leaving sysfs, a link to nothing.
    Path loop = Files.createDirectories(fs.sys.resolve("class/loopy")).resolve("self");
    Files.createSymbolicLink(loop, loop);
    fs.link("class/escape/out", root);
    fs.link("class/escape/gone", fs.sys.resolve("devices/nowhere"));
    udevData = Files.createDirectories(root.resolve("udev-data"));
    Files.writeString(udevData.resolve("c81:0"), "E:ID_SERIAL=Cam_1\nG:uaccess\nG:seat\n");
  }

  private List<DiscoveredDevice> scan(String details) throws InvalidDetailsException {
    return scan(details, Map.of());
  }

  private List<DiscoveredDevice> scan(String details, Map<String, String> properties)
      throws InvalidDetailsException {
    return new UdevScanner(
            UdevDetails.parse(details).orThrow(), fs.sys, Optional.of(udevData), properties)
        .scan();
  }

  private static String rules(String... rules) {
    StringBuilder b = new StringBuilder("udevRules:\n");
    for (String r : rules) {
      b.append("- '").append(r).append("'\n");
    }
    return b.toString();
  }

  private List<String> ids(String... rules) throws InvalidDetailsException {
    List<String> ids = new ArrayList<>();
    scan(rules(rules)).forEach(d -> ids.add(d.id()));
    return ids;
  }

  @Test
  void videoNodeWithAkrisProperties() throws Exception {
    assertThat(scan(rules("KERNEL==\"video[0-9]*\"")))
        .containsExactly(
            new DiscoveredDevice(
                VIDEO,
                Map.of("UDEV_DEVNODE", "/dev/video0", "UDEV_DEVPATH", VIDEO),
                List.of(),
                List.of(new DiscoveredDevice.DeviceSpec("/dev/video0", "/dev/video0", "rwm")),
                Map.of(),
                Optional.empty(),
                false));
  }

  @Test
  void deviceWithoutNodeStandsForItsNearestAncestorWithOne() throws Exception {
    assertThat(ids("KERNEL==\"1-1:1.0\"")).containsExactly(CAM);
    // No ancestor with a node: the device itself, without UDEV_DEVNODE.
    DiscoveredDevice gpu = scan(rules("KERNEL==\"0000:01:00.0\"")).get(0);
    assertThat(gpu.id()).isEqualTo(GPU);
    assertThat(gpu.properties()).containsExactly(Map.entry("UDEV_DEVPATH", GPU));
    assertThat(gpu.deviceSpecs()).isEmpty();
  }

  @Test
  void usbResourceFromTheNodeAddress() throws Exception {
    DiscoveredDevice cam =
        scan(
                rules("SUBSYSTEM==\"usb\", ATTR{idVendor}==\"046d\""),
                Map.of("devicePluginResourceName", "akri.sh/udev-usb"))
            .get(0);
    assertThat(cam.id()).isEqualTo(CAM);
    assertThat(cam.properties())
        .containsEntry("USB_RESOURCE_AKRI_SH_UDEV-USB", "1:2")
        .containsEntry("UDEV_DEVNODE", "/dev/bus/usb/001/002")
        // a USB device's path contains "usb": no PCI resource
        .doesNotContainKey("PCI_RESOURCE_AKRI_SH_UDEV-USB");
  }

  @Test
  void pciResourceAndVfioSpecsFromTheIommuGroup() throws Exception {
    DiscoveredDevice gpu =
        scan(
                rules("SUBSYSTEM==\"pci\", ATTR{vendor}==\"0x10de\""),
                Map.of("devicePluginResourceName", "nvidia.com/gpu", "vfioPassthrough", " TRUE "))
            .get(0);
    assertThat(gpu.properties()).containsEntry("PCI_RESOURCE_NVIDIA_COM_GPU", "0000:01:00.0");
    assertThat(gpu.deviceSpecs())
        .containsExactly(
            new DiscoveredDevice.DeviceSpec("/dev/vfio/12", "/dev/vfio/12", "rwm"),
            new DiscoveredDevice.DeviceSpec("/dev/vfio/vfio", "/dev/vfio/vfio", "rwm"));
    DiscoveredDevice card =
        scan(rules("KERNEL==\"card0\""), Map.of("devicePluginResourceName", "nvidia.com/gpu"))
            .get(0);
    assertThat(card.properties()).containsEntry("PCI_RESOURCE_NVIDIA_COM_GPU", "0000:01:00.0");
  }

  @Test
  void groupRecursiveGathersMatchesUnderTheTopMostInEitherOrder() throws Exception {
    for (List<String> order :
        List.of(
            List.of("KERNEL==\"1-1\"", "KERNEL==\"video0\""),
            List.of("KERNEL==\"video0\"", "KERNEL==\"1-1\""))) {
      List<DiscoveredDevice> devices =
          scan(rules(order.toArray(String[]::new)) + "groupRecursive: true\npermissions: r\n");
      assertThat(devices).hasSize(1);
      DiscoveredDevice d = devices.get(0);
      assertThat(d.id()).isEqualTo(CAM);
      assertThat(d.properties())
          .containsExactlyInAnyOrderEntriesOf(
              Map.of(
                  "UDEV_DEVNODE_0", "/dev/bus/usb/001/002",
                  "UDEV_DEVNODE_1", "/dev/video0",
                  "UDEV_DEVPATH", CAM));
      assertThat(d.deviceSpecs())
          .extracting(
              DiscoveredDevice.DeviceSpec::hostPath, DiscoveredDevice.DeviceSpec::permissions)
          .containsExactly(
              org.assertj.core.groups.Tuple.tuple("/dev/bus/usb/001/002", "r"),
              org.assertj.core.groups.Tuple.tuple("/dev/video0", "r"));
    }
    // Without grouping: two devices.
    assertThat(ids("KERNEL==\"1-1\"", "KERNEL==\"video0\"")).containsExactly(CAM, VIDEO);
  }

  @Test
  void groupingIsByPathComponentNotByStringPrefix() {
    java.util.Map<String, java.util.Set<RuleMatcher.Match>> groups =
        new java.util.LinkedHashMap<>();
    UdevScanner.insertWithRelatives(
        groups, new RuleMatcher.Match("/devices/virtual/block/zram1", Optional.empty()));
    UdevScanner.insertWithRelatives(
        groups, new RuleMatcher.Match("/devices/virtual/block/zram10", Optional.empty()));
    assertThat(groups).hasSize(2);
  }

  @Test
  void udevDatabaseGivesTagsAndProperties() throws Exception {
    assertThat(ids("TAG==\"uaccess\"")).containsExactly(VIDEO);
    assertThat(ids("TAG==\"uaccess\", TAG==\"seat\"")).containsExactly(VIDEO);
    assertThat(ids("TAG==\"uaccess\", TAG==\"nope\"")).isEmpty();
    assertThat(ids("ENV{ID_SERIAL}==\"Cam_*\"")).containsExactly(VIDEO);
    assertThat(ids("ENV{ID_SER*}==\"Cam_1\"")).containsExactly(VIDEO);
    assertThat(ids("KERNEL==\"video0\", TAGS==\"seat\"")).containsExactly(VIDEO);
    assertThat(ids("KERNEL==\"video0\", TAG!=\"uacc.*\"")).isEmpty();
    assertThat(ids("KERNEL==\"video0\", ENV{ID_SERIAL}!=\"Cam_[0-9]\"")).isEmpty();
    assertThat(ids("KERNEL==\"card0\", ENV{ID_SERIAL}!=\"Cam_[0-9]\"")).containsExactly(CARD);
  }

  @Test
  void severalEnvFiltersNeedOnlyOneToMatchAsInLibudev() throws Exception {
    assertThat(ids("KERNEL==\"video0\", ENV{ID_SERIAL}==\"nope\", ENV{MAJOR}==\"81\""))
        .containsExactly(VIDEO);
    assertThat(ids("KERNEL==\"video0\", ENV{ID_SERIAL}==\"nope\", ENV{MAJOR}==\"1\"")).isEmpty();
  }

  @Test
  void severalKernelOrSubsystemFiltersNeedOnlyOneToMatchAsInLibudevButAttributesNeedAll()
      throws Exception {
    assertThat(ids("KERNEL==\"card0\", KERNEL==\"video0\"")).containsExactlyInAnyOrder(CARD, VIDEO);
    assertThat(ids("SUBSYSTEM==\"drm\", SUBSYSTEM==\"video4linux\""))
        .containsExactlyInAnyOrder(CARD, VIDEO);
    assertThat(ids("SUBSYSTEM==\"usb\", ATTR{idVendor}==\"046d\", ATTR{idVendor}==\"1d6b\""))
        .containsExactlyInAnyOrder(CAM, USB1);
    assertThat(ids("SUBSYSTEM==\"usb\", ATTR{idVendor}==\"046d\", ATTR{nope}==\"*\"")).isEmpty();
  }

  @Test
  void pluralFieldsWalkTheAncestors() throws Exception {
    assertThat(ids("KERNEL==\"video0\", DRIVERS==\"uvc.*\"")).containsExactly(VIDEO);
    assertThat(ids("KERNEL==\"video0\", DRIVER==\"uvcvideo\"")).isEmpty();
    assertThat(ids("KERNEL==\"video0\", DRIVER!=\"uvcvideo\"")).containsExactly(VIDEO);
    assertThat(ids("KERNEL==\"video0\", ATTRS{idVendor}==\"046d\"")).containsExactly(VIDEO);
    assertThat(ids("KERNEL==\"video0\", ATTRS{idVendor}!=\"1d6b\"")).isEmpty();
    assertThat(ids("KERNEL==\"video0\", SUBSYSTEMS==\"pci\", KERNELS==\"1-1\""))
        .containsExactly(VIDEO);
    assertThat(ids("KERNEL==\"video0\", KERNELS==\"usb2\"")).isEmpty();
  }

  @Test
  void devpathMatchesByWildcardAndExcludesByRegex() throws Exception {
    assertThat(ids("DEVPATH==\"" + CAM + "\"")).containsExactly(CAM);
    assertThat(ids("DEVPATH==\"*/drm/*\"")).containsExactly(CARD);
    assertThat(ids("SUBSYSTEM==\"drm\", DEVPATH!=\"/devices/pci.*\"")).isEmpty();
  }

  @Test
  void brokenEntriesAreSkippedAndTheScanGoesOn() throws Exception {
    assertThat(ids("SUBSYSTEM==\"loopy\"")).isEmpty();
    assertThat(ids("SUBSYSTEM==\"escape\"")).isEmpty();
    assertThat(ids("")).contains(VIDEO, CARD, CAM).doesNotContain("/");
    // An attribute name leaving the device's directory reads as absent.
    assertThat(ids("KERNEL==\"video0\", ATTR{/etc/passwd}==\"*\"")).isEmpty();
  }

  @Test
  void aDeviceVanishingBetweenListingAndReadingIsSkipped() throws Exception {
    SysfsView view = new SysfsView(fs.sys, Optional.empty());
    RuleMatcher m = new RuleMatcher(UdevRule.parse(0, "KERNEL==\"card0\""));
    Files.delete(fs.sys.resolve(CARD.substring(1)).resolve("uevent"));
    assertThat(m.find(view)).isEmpty();
  }
}
