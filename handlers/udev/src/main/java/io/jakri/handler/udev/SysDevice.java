package io.jakri.handler.udev;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One device of a {@link SysfsView}: its sysfs directory and what udev would say about it, read
 * lazily and at most once per view. Not thread-safe (a view belongs to one scan).
 */
final class SysDevice {

  private static final int MAX_ATTRIBUTE_BYTES = 64 * 1024;
  private static final Set<String> LINK_ATTRIBUTES = Set.of("driver", "subsystem", "module");

  private final SysfsView view;
  private final String devpath;
  private final Path syspath;

  private Optional<Optional<String>> subsystem = Optional.empty();
  private Optional<Optional<String>> driver = Optional.empty();
  private Map<String, String> uevent;
  private Optional<UdevDatabase.Entry> db;
  private boolean dbRead;
  private Map<String, String> properties;
  private Optional<Optional<SysDevice>> parent = Optional.empty();
  private final Map<String, Optional<String>> attributes = new LinkedHashMap<>();

  SysDevice(SysfsView view, String devpath, Path syspath) {
    this.view = view;
    this.devpath = devpath;
    this.syspath = syspath;
  }

  /** The sysfs path without the sysfs root, such as {@code /devices/virtual/block/zram1}. */
  String devpath() {
    return devpath;
  }

  Path syspath() {
    return syspath;
  }

  /** The kernel name: the last part of the devpath, {@code !} read as {@code /}. */
  String sysname() {
    return devpath.substring(devpath.lastIndexOf('/') + 1).replace('!', '/');
  }

  Optional<String> subsystem() {
    if (subsystem.isEmpty()) {
      subsystem = Optional.of(linkName("subsystem"));
    }
    return subsystem.get();
  }

  Optional<String> driver() {
    if (driver.isEmpty()) {
      driver = Optional.of(linkName("driver"));
    }
    return driver.get();
  }

  /** The {@code uevent} file's KEY=value lines; empty if unreadable (gone, no permission). */
  Map<String, String> uevent() {
    if (uevent == null) {
      uevent = new LinkedHashMap<>();
      Optional<String> text = view.read(syspath.resolve("uevent"), MAX_ATTRIBUTE_BYTES);
      text.ifPresent(
          t -> {
            for (String line : t.split("\n")) {
              int eq = line.indexOf('=');
              if (eq > 0) {
                uevent.put(line.substring(0, eq), line.substring(eq + 1));
              }
            }
          });
    }
    return uevent;
  }

  /** Whether the device's {@code uevent} file can still be read (it vanishes with the device). */
  boolean present() {
    return Files.isReadable(syspath.resolve("uevent"));
  }

  /** The device node, {@code /dev/} and the uevent's {@code DEVNAME}, if the device has one. */
  Optional<String> devnode() {
    String name = uevent().get("DEVNAME");
    if (name == null || name.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(name.startsWith("/") ? name : "/dev/" + name);
  }

  private Optional<UdevDatabase.Entry> db() {
    if (!dbRead) {
      dbRead = true;
      db =
          view.database()
              .flatMap(
                  d ->
                      d.lookup(
                          UdevDatabase.fileName(
                              subsystem().orElse(""),
                              sysname(),
                              Optional.ofNullable(uevent().get("MAJOR")),
                              Optional.ofNullable(uevent().get("MINOR")),
                              Optional.ofNullable(uevent().get("IFINDEX")))));
    }
    return db;
  }

  /**
   * The device's udev properties: the uevent's, DEVPATH, SUBSYSTEM and DEVNAME (the full node path)
   * as libudev adds them, then the udev database's (with TAGS, CURRENT_TAGS and DEVLINKS).
   */
  Map<String, String> properties() {
    if (properties == null) {
      Map<String, String> p = new LinkedHashMap<>(uevent());
      p.put("DEVPATH", devpath);
      subsystem().ifPresent(s -> p.put("SUBSYSTEM", s));
      devnode().ifPresent(n -> p.put("DEVNAME", n));
      db().ifPresent(
              e -> {
                p.putAll(e.properties());
                if (!e.tags().isEmpty()) {
                  p.put("TAGS", ":" + String.join(":", e.tags()) + ":");
                }
                if (!e.currentTags().isEmpty()) {
                  p.put("CURRENT_TAGS", ":" + String.join(":", e.currentTags()) + ":");
                }
                if (!e.links().isEmpty()) {
                  List<String> links = new ArrayList<>();
                  e.links().forEach(l -> links.add("/dev/" + l));
                  p.put("DEVLINKS", String.join(" ", links));
                }
              });
      properties = p;
    }
    return properties;
  }

  /** The device's udev tags (from the udev database; none without udevd). */
  List<String> tags() {
    return db().map(UdevDatabase.Entry::tags).orElse(List.of());
  }

  /**
   * A sysfs attribute as libudev reads it: the file's content without trailing newlines; for the
   * {@code driver}, {@code subsystem} and {@code module} links the target's name; empty for other
   * links, directories, unreadable or missing files and names leaving the device's directory.
   */
  Optional<String> attribute(String key) {
    Optional<String> cached = attributes.get(key);
    if (cached != null) {
      return cached;
    }
    Optional<String> value = readAttribute(key);
    attributes.put(key, value);
    return value;
  }

  private Optional<String> readAttribute(String key) {
    if (key.isEmpty() || key.startsWith("/") || key.contains("\0")) {
      return Optional.empty();
    }
    Path file;
    try {
      file = syspath.resolve(key).normalize();
    } catch (RuntimeException e) {
      return Optional.empty();
    }
    if (!file.startsWith(syspath) || file.equals(syspath)) {
      return Optional.empty();
    }
    BasicFileAttributes attrs;
    try {
      attrs = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
    if (attrs.isSymbolicLink()) {
      return LINK_ATTRIBUTES.contains(key) ? linkName(key) : Optional.empty();
    }
    if (!attrs.isRegularFile()) {
      return Optional.empty();
    }
    return view.read(file, MAX_ATTRIBUTE_BYTES).map(SysDevice::dropTrailingNewlines);
  }

  private static String dropTrailingNewlines(String s) {
    int end = s.length();
    while (end > 0 && (s.charAt(end - 1) == '\n' || s.charAt(end - 1) == '\r')) {
      end--;
    }
    return s.substring(0, end);
  }

  /** The nearest ancestor directory that is a device (has a {@code uevent} file). */
  Optional<SysDevice> parent() {
    if (parent.isEmpty()) {
      parent = Optional.of(view.parentOf(this));
    }
    return parent.get();
  }

  private Optional<String> linkName(String link) {
    return view.linkName(syspath.resolve(link));
  }

  @Override
  public String toString() {
    return devpath;
  }
}
