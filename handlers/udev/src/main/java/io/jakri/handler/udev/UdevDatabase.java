package io.jakri.handler.udev;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The udev database ({@code /run/udev/data}) that udevd keeps per device: a file named after the
 * device ({@code b8:0}, {@code c189:1}, {@code n3} or {@code +subsystem:sysname}) with lines {@code
 * E:KEY=value} (properties), {@code G:tag} (tags), {@code Q:tag} (current tags) and {@code S:link}
 * (links under {@code /dev}); other lines are ignored. Read-only, thread-safe.
 */
final class UdevDatabase {

  private static final Logger LOG = LoggerFactory.getLogger(UdevDatabase.class);
  private static final int MAX_BYTES = 256 * 1024;

  /** What the database says about one device. */
  record Entry(
      Map<String, String> properties,
      List<String> tags,
      List<String> currentTags,
      List<String> links) {
    Entry {
      properties = Map.copyOf(properties);
      tags = List.copyOf(tags);
      currentTags = List.copyOf(currentTags);
      links = List.copyOf(links);
    }
  }

  private final Path dir;

  UdevDatabase(Path dir) {
    this.dir = dir;
  }

  Path dir() {
    return dir;
  }

  /** The database file name of a device, as udevd names it. */
  static String fileName(
      String subsystem,
      String sysname,
      Optional<String> major,
      Optional<String> minor,
      Optional<String> ifindex) {
    if (major.isPresent() && minor.isPresent() && !"0".equals(major.get())) {
      return ("block".equals(subsystem) ? "b" : "c") + major.get() + ":" + minor.get();
    }
    if (ifindex.isPresent()) {
      return "n" + ifindex.get();
    }
    return "+" + subsystem + ":" + sysname;
  }

  /** The entry in file {@code name}, empty when there is none or it cannot be read. */
  Optional<Entry> lookup(String name) {
    if (name.contains("/") || name.equals("..") || name.equals(".")) {
      return Optional.empty();
    }
    Path file = dir.resolve(name);
    try (InputStream in = Files.newInputStream(file)) {
      byte[] bytes = in.readNBytes(MAX_BYTES);
      return Optional.of(parse(new String(bytes, StandardCharsets.UTF_8)));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    } catch (IOException | RuntimeException e) {
      LOG.debug("udev: cannot read udev database file {}: {}", file, e.toString());
      return Optional.empty();
    }
  }

  /** Parses the text of one database file. Pure. */
  static Entry parse(String text) {
    Map<String, String> properties = new LinkedHashMap<>();
    List<String> tags = new ArrayList<>();
    List<String> current = new ArrayList<>();
    List<String> links = new ArrayList<>();
    for (String line : text.split("\n")) {
      if (line.length() < 2 || line.charAt(1) != ':') {
        continue;
      }
      String value = line.substring(2);
      switch (line.charAt(0)) {
        case 'E' -> {
          int eq = value.indexOf('=');
          if (eq > 0) {
            properties.put(value.substring(0, eq), value.substring(eq + 1));
          }
        }
        case 'G' -> tags.add(value);
        case 'Q' -> current.add(value);
        case 'S' -> links.add(value);
        default -> {
          // I (initialised at), L (link priority), W (watch), V (version), N (node name): unused
        }
      }
    }
    return new Entry(properties, tags, current, links);
  }
}
