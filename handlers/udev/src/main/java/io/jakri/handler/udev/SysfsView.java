package io.jakri.handler.udev;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One scan's view of the devices in sysfs, as libudev's enumerator sees them: every entry of {@code
 * <sysfs>/bus/*&#47;devices} and {@code <sysfs>/class/*}, resolved to its directory under {@code
 * <sysfs>/devices}, merged with the udev database when there is one. Devices are read lazily and
 * cached for the view's life, so ancestors shared by many devices are read once. Problems (files
 * that cannot be read, devices that vanish mid-scan, symlink loops, links leaving sysfs) skip the
 * entry with a debug line. Not thread-safe: one scan, one thread.
 */
final class SysfsView {

  private static final Logger LOG = LoggerFactory.getLogger(SysfsView.class);

  private final Path sysRoot;
  private final Path devicesRoot;
  private final Optional<UdevDatabase> database;
  private final Map<String, SysDevice> byDevpath = new HashMap<>();

  SysfsView(Path sysRoot, Optional<UdevDatabase> database) {
    this.sysRoot = realOrSelf(Objects.requireNonNull(sysRoot, "sysRoot"));
    this.devicesRoot = this.sysRoot.resolve("devices");
    this.database = Objects.requireNonNull(database, "database");
  }

  private static Path realOrSelf(Path p) {
    try {
      return p.toRealPath();
    } catch (IOException e) {
      return p.toAbsolutePath().normalize();
    }
  }

  Optional<UdevDatabase> database() {
    return database;
  }

  Path sysRoot() {
    return sysRoot;
  }

  /**
   * The devices whose bus or class directory name passes {@code subsystem} and whose entry name
   * passes {@code sysname} (the enumerator's cheap checks, done before any device file is read), in
   * a stable order without duplicates.
   */
  List<SysDevice> candidates(Predicate<String> subsystem, Predicate<String> sysname) {
    Map<String, SysDevice> found = new LinkedHashMap<>();
    for (Path bus : list(sysRoot.resolve("bus"))) {
      String name = bus.getFileName().toString();
      if (subsystem.test(name)) {
        addEntries(bus.resolve("devices"), sysname, found);
      }
    }
    for (Path cls : list(sysRoot.resolve("class"))) {
      String name = cls.getFileName().toString();
      if (subsystem.test(name)) {
        addEntries(cls, sysname, found);
      }
    }
    return new ArrayList<>(found.values());
  }

  private void addEntries(Path dir, Predicate<String> sysname, Map<String, SysDevice> found) {
    for (Path entry : list(dir)) {
      if (!sysname.test(entry.getFileName().toString())) {
        continue;
      }
      Path real;
      try {
        real = entry.toRealPath();
      } catch (IOException | RuntimeException e) {
        LOG.debug("udev: skipping {}: {}", entry, e.toString());
        continue;
      }
      if (!real.startsWith(devicesRoot) || real.equals(devicesRoot)) {
        LOG.debug("udev: skipping {}: it resolves to {}, outside {}", entry, real, devicesRoot);
        continue;
      }
      if (!Files.isRegularFile(real.resolve("uevent"))) {
        continue;
      }
      SysDevice device = device(real);
      found.putIfAbsent(device.devpath(), device);
    }
  }

  /** The device at a real sysfs directory (cached). */
  SysDevice device(Path real) {
    String devpath = "/" + sysRoot.relativize(real).toString().replace('\\', '/');
    return byDevpath.computeIfAbsent(devpath, d -> new SysDevice(this, d, real));
  }

  /** The device with this devpath, if its directory exists and is a device. */
  Optional<SysDevice> byDevpath(String devpath) {
    SysDevice cached = byDevpath.get(devpath);
    if (cached != null) {
      return Optional.of(cached);
    }
    Path dir = sysRoot.resolve(devpath.startsWith("/") ? devpath.substring(1) : devpath);
    Path real;
    try {
      real = dir.toRealPath();
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
    if (!real.startsWith(devicesRoot) || !Files.isRegularFile(real.resolve("uevent"))) {
      return Optional.empty();
    }
    return Optional.of(device(real));
  }

  Optional<SysDevice> parentOf(SysDevice child) {
    Path dir = child.syspath().getParent();
    while (dir != null && dir.startsWith(devicesRoot) && !dir.equals(devicesRoot)) {
      if (Files.isRegularFile(dir.resolve("uevent"))) {
        return Optional.of(device(dir));
      }
      dir = dir.getParent();
    }
    return Optional.empty();
  }

  /** The name of a symbolic link's target, if {@code link} is one. */
  Optional<String> linkName(Path link) {
    try {
      Path target = Files.readSymbolicLink(link);
      Path name = target.getFileName();
      return name == null ? Optional.empty() : Optional.of(name.toString());
    } catch (NoSuchFileException e) {
      return Optional.empty();
    } catch (IOException | RuntimeException e) {
      LOG.debug("udev: cannot read link {}: {}", link, e.toString());
      return Optional.empty();
    }
  }

  /** A small file's text, at most {@code maxBytes}; empty when it cannot be read. */
  Optional<String> read(Path file, int maxBytes) {
    try (InputStream in = Files.newInputStream(file)) {
      return Optional.of(new String(in.readNBytes(maxBytes), StandardCharsets.UTF_8));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    } catch (IOException | RuntimeException e) {
      LOG.debug("udev: cannot read {}: {}", file, e.toString());
      return Optional.empty();
    }
  }

  private static List<Path> list(Path dir) {
    List<Path> entries = new ArrayList<>();
    try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
      stream.forEach(entries::add);
    } catch (NoSuchFileException | NotDirectoryException e) {
      // absent: nothing to list
    } catch (IOException | RuntimeException e) {
      LOG.debug("udev: cannot list {}: {}", dir, e.toString());
    }
    entries.sort(null);
    return entries;
  }
}
