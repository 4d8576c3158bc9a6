package io.jakri.handler.udev;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Builds a small sysfs-shaped tree in a temp directory for unit tests of the device model. */
final class FakeSysfs {

  final Path sys;

  FakeSysfs(Path root) throws IOException {
    this.sys = Files.createDirectories(root.resolve("sys"));
  }

  /** A device directory with its uevent text, subsystem link and optional driver link. */
  Path device(String devpath, String uevent, String subsystemLink, String driver)
      throws IOException {
    Path dir = Files.createDirectories(sys.resolve(devpath.substring(1)));
    Files.writeString(dir.resolve("uevent"), uevent);
    if (subsystemLink != null) {
      Files.createSymbolicLink(dir.resolve("subsystem"), sys.resolve(subsystemLink));
    }
    if (driver != null) {
      Files.createSymbolicLink(dir.resolve("driver"), sys.resolve("bus/x/drivers").resolve(driver));
    }
    return dir;
  }

  void attribute(String devpath, String name, String value) throws IOException {
    Path file = sys.resolve(devpath.substring(1)).resolve(name);
    Files.createDirectories(file.getParent());
    Files.writeString(file, value);
  }

  /** An entry {@code <dir>/<name>} linking to the device (as /sys/class and /sys/bus hold). */
  void entry(String dir, String devpath) throws IOException {
    Path d = Files.createDirectories(sys.resolve(dir));
    Path target = sys.resolve(devpath.substring(1));
    Files.createSymbolicLink(d.resolve(target.getFileName()), target);
  }

  void link(String path, Path target) throws IOException {
    Path p = sys.resolve(path);
    Files.createDirectories(p.getParent());
    Files.createSymbolicLink(p, target);
  }
}
