package io.jakri.handler.udev;

import io.jakri.handler.DiscoveredDevice;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Turns one Configuration's rules into Akri's devices: every rule is matched against a fresh {@link
 * SysfsView}; matches are keyed by devpath (the device id, unshared), or with {@code
 * groupRecursive} gathered under the top-most matched device. Each device gets {@code UDEV_DEVNODE}
 * (or {@code UDEV_DEVNODE_<i>} when grouped) and {@code UDEV_DEVPATH}, one device spec per node
 * with the Configuration's permissions, and with a {@code devicePluginResourceName} Akri's {@code
 * USB_RESOURCE_<R>} / {@code PCI_RESOURCE_<R>} (plus the VFIO specs with {@code vfioPassthrough}).
 * Stateless apart from its settings; thread-safe.
 */
final class UdevScanner {

  static final String DEVNODE = "UDEV_DEVNODE";
  static final String DEVPATH = "UDEV_DEVPATH";
  static final String RESOURCE_NAME_PROPERTY = "devicePluginResourceName";
  static final String VFIO_PROPERTY = "vfioPassthrough";

  private final UdevDetails details;
  private final List<RuleMatcher> matchers;
  private final Path sysRoot;
  private final Optional<Path> udevData;
  private final Optional<String> resourceName;
  private final boolean vfio;

  UdevScanner(
      UdevDetails details,
      Path sysRoot,
      Optional<Path> udevData,
      Map<String, String> discoveryProperties) {
    this.details = details;
    this.matchers = details.rules().stream().map(RuleMatcher::new).toList();
    this.sysRoot = sysRoot;
    this.udevData = udevData;
    this.resourceName =
        Optional.ofNullable(discoveryProperties.get(RESOURCE_NAME_PROPERTY)).map(String::trim);
    this.vfio =
        Optional.ofNullable(discoveryProperties.get(VFIO_PROPERTY))
            .map(v -> v.trim().equalsIgnoreCase("true"))
            .orElse(false);
  }

  /** Scans sysfs now; sorted by id. */
  List<DiscoveredDevice> scan() {
    SysfsView view =
        new SysfsView(sysRoot, udevData.filter(Files::isDirectory).map(UdevDatabase::new));
    Map<String, Set<RuleMatcher.Match>> groups = new LinkedHashMap<>();
    for (RuleMatcher matcher : matchers) {
      for (RuleMatcher.Match match : matcher.find(view)) {
        if (details.groupRecursive()) {
          insertWithRelatives(groups, match);
        } else {
          Set<RuleMatcher.Match> one = new LinkedHashSet<>();
          one.add(match);
          groups.put(match.devpath(), one);
        }
      }
    }
    List<DiscoveredDevice> devices = new ArrayList<>();
    new TreeMap<>(groups).forEach((id, matches) -> devices.add(device(view, id, matches)));
    return devices;
  }

  private static boolean within(String ancestor, String path) {
    return path.equals(ancestor)
        || path.startsWith(ancestor.endsWith("/") ? ancestor : ancestor + "/");
  }

  /** Akri's grouping: a match below a group joins it; a match above groups takes them over. */
  static void insertWithRelatives(Map<String, Set<RuleMatcher.Match>> groups, RuleMatcher.Match m) {
    for (Map.Entry<String, Set<RuleMatcher.Match>> g : groups.entrySet()) {
      if (within(g.getKey(), m.devpath())) {
        g.getValue().add(m);
        return;
      }
    }
    Set<RuleMatcher.Match> merged = new LinkedHashSet<>();
    List<String> children = groups.keySet().stream().filter(k -> within(m.devpath(), k)).toList();
    for (String child : children) {
      merged.addAll(groups.remove(child));
    }
    merged.add(m);
    groups.put(m.devpath(), merged);
  }

  private DiscoveredDevice device(SysfsView view, String id, Set<RuleMatcher.Match> matches) {
    Map<String, String> properties = new LinkedHashMap<>();
    List<DiscoveredDevice.DeviceSpec> specs = new ArrayList<>();
    List<RuleMatcher.Match> ordered = new ArrayList<>(matches);
    ordered.sort(
        Comparator.comparing(RuleMatcher.Match::devpath)
            .thenComparing(m -> m.devnode().orElse("")));
    for (int i = 0; i < ordered.size(); i++) {
      String suffix = details.groupRecursive() ? "_" + i : "";
      Optional<String> node = ordered.get(i).devnode();
      if (node.isEmpty()) {
        continue;
      }
      properties.put(DEVNODE + suffix, node.get());
      if (resourceName.isPresent()) {
        Optional<String> usb = usbAddress(node.get());
        if (usb.isPresent()) {
          properties.put(resourceEnv("USB_RESOURCE", resourceName.get()) + suffix, usb.get());
        }
      }
      specs.add(new DiscoveredDevice.DeviceSpec(node.get(), node.get(), details.permissions()));
    }
    properties.put(DEVPATH, id);
    boolean usbDevice = false;
    for (String part : id.split("/")) {
      usbDevice |= part.startsWith("usb");
    }
    if (resourceName.isPresent() && !usbDevice) {
      Optional<String> pci = pciAddress(id);
      if (pci.isPresent()) {
        properties.put(resourceEnv("PCI_RESOURCE", resourceName.get()), pci.get());
        if (vfio) {
          Optional<String> group =
              view.linkName(view.sysRoot().resolve(id.substring(1)).resolve("iommu_group"));
          if (group.isPresent()) {
            String path = "/dev/vfio/" + group.get();
            specs.add(new DiscoveredDevice.DeviceSpec(path, path, "rwm"));
            specs.add(new DiscoveredDevice.DeviceSpec("/dev/vfio/vfio", "/dev/vfio/vfio", "rwm"));
          }
        }
      }
    }
    return new DiscoveredDevice(
        id, properties, List.of(), specs, Map.of(), Optional.empty(), false);
  }

  /** Akri's env name: {@code <PREFIX>_} and the resource name upper-cased, '.' and '/' as '_'. */
  static String resourceEnv(String prefix, String resourceName) {
    StringBuilder b = new StringBuilder(prefix).append('_');
    for (char c : resourceName.toCharArray()) {
      b.append(c == '.' || c == '/' ? '_' : c >= 'a' && c <= 'z' ? (char) (c - 'a' + 'A') : c);
    }
    return b.toString();
  }

  /** {@code bus:device} of a {@code /dev/bus/usb/BBB/DDD} node, without leading zeros. */
  static Optional<String> usbAddress(String devnode) {
    if (!devnode.startsWith("/dev/bus/usb/")) {
      return Optional.empty();
    }
    String[] parts = devnode.split("/", -1);
    if (parts.length < 2) {
      return Optional.empty();
    }
    try {
      long bus = Long.parseLong(parts[parts.length - 2]);
      long dev = Long.parseLong(parts[parts.length - 1]);
      if (bus < 0 || dev < 0 || bus > 0xffffffffL || dev > 0xffffffffL) {
        return Optional.empty();
      }
      return Optional.of(bus + ":" + dev);
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }

  /** The last path segment that is a PCI address {@code dddd:bb:dd.f}. */
  static Optional<String> pciAddress(String path) {
    Optional<String> last = Optional.empty();
    for (String part : path.split("/")) {
      if (isPciAddress(part)) {
        last = Optional.of(part);
      }
    }
    return last;
  }

  private static boolean isPciAddress(String s) {
    String[] parts = s.split(":", 3);
    if (parts.length != 3) {
      return false;
    }
    int dot = parts[2].indexOf('.');
    if (dot < 0) {
      return false;
    }
    for (String seg :
        List.of(parts[0], parts[1], parts[2].substring(0, dot), parts[2].substring(dot + 1))) {
      if (seg.isEmpty() || !seg.chars().allMatch(c -> Character.digit(c, 16) >= 0 && c < 128)) {
        return false;
      }
    }
    return true;
  }
}
