package io.jakri.handler.udev;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Finds the devices one {@link UdevRule} selects, with Akri's semantics. Akri hands part of a rule
 * to libudev's enumerator and checks the rest itself, and the two halves differ:
 *
 * <ul>
 *   <li>Enumerator, shell wildcards ({@link Glob}): {@code KERNEL==} and {@code SUBSYSTEM==}
 *       (several of one field: any may match), {@code SUBSYSTEM!=} (none may match), {@code
 *       ATTR{k}==} (every attribute named must match; a missing attribute fails), {@code ATTR{k}!=}
 *       (a missing attribute passes), {@code ENV{k}==} (wildcards in the name too; several ENV
 *       filters: any may match), {@code TAG==} (exact tag, all required) and {@code DEVPATH==}.
 *   <li>Akri, whole-string regular expressions: {@code KERNEL!=}, {@code DEVPATH!=}, {@code ENV!=}
 *       and {@code TAG!=} (a missing value passes), {@code DRIVER==/!=} (no driver fails {@code
 *       ==}, passes {@code !=}), and the plural fields {@code KERNELS}, {@code SUBSYSTEMS}, {@code
 *       DRIVERS}, {@code ATTRS{k}}, {@code TAGS}: {@code ==} when the device or any ancestor
 *       matches, {@code !=} when none does.
 * </ul>
 *
 * A selected device without a device node stands for its nearest ancestor that has one (or itself,
 * without a node, when none has).
 */
final class RuleMatcher {

  /** A selected device: its devpath and device node. */
  record Match(String devpath, Optional<String> devnode) {}

  private final UdevRule rule;
  private final List<String> subsystems = new ArrayList<>();
  private final List<String> notSubsystems = new ArrayList<>();
  private final List<String> sysnames = new ArrayList<>();
  private final List<String> devpaths = new ArrayList<>();
  private final Map<String, List<String>> attributes = new LinkedHashMap<>();
  private final List<Filter> notAttributes = new ArrayList<>();
  private final List<Filter> properties = new ArrayList<>();
  private final List<String> tags = new ArrayList<>();
  private final List<Filter> remaining = new ArrayList<>();

  RuleMatcher(UdevRule rule) {
    this.rule = rule;
    for (Filter f : rule.filters()) {
      if (f.byRegex()) {
        remaining.add(f);
        continue;
      }
      switch (f.field()) {
        case SUBSYSTEM -> (f.equal() ? subsystems : notSubsystems).add(f.value());
        case KERNEL -> sysnames.add(f.value());
        case DEVPATH -> devpaths.add(f.value());
        case ATTR -> {
          if (f.equal()) {
            attributes.computeIfAbsent(f.key(), k -> new ArrayList<>()).add(f.value());
          } else {
            notAttributes.add(f);
          }
        }
        case ENV -> properties.add(f);
        case TAG -> tags.add(f.value());
        default -> throw new IllegalStateException("not an enumerator filter: " + f);
      }
    }
  }

  UdevRule rule() {
    return rule;
  }

  /** The devices of {@code view} this rule selects, each as itself or its nearest node. */
  List<Match> find(SysfsView view) {
    List<Match> matches = new ArrayList<>();
    for (SysDevice device : view.candidates(this::subsystemDir, this::sysnameEntry)) {
      if (!device.present()) {
        continue;
      }
      if (enumeratorAccepts(device) && remainingAccept(device)) {
        matches.add(nearestNode(device));
      }
    }
    return matches;
  }

  private boolean subsystemDir(String name) {
    if (!subsystems.isEmpty() && subsystems.stream().noneMatch(g -> Glob.matches(g, name))) {
      return false;
    }
    return notSubsystems.stream().noneMatch(g -> Glob.matches(g, name));
  }

  private boolean sysnameEntry(String name) {
    return sysnames.isEmpty() || sysnames.stream().anyMatch(g -> Glob.matches(g, name));
  }

  private boolean enumeratorAccepts(SysDevice device) {
    if (!devpaths.isEmpty()
        && devpaths.stream().noneMatch(g -> Glob.matches(g, device.devpath()))) {
      return false;
    }
    for (Map.Entry<String, List<String>> e : attributes.entrySet()) {
      Optional<String> value = device.attribute(e.getKey());
      if (value.isEmpty() || e.getValue().stream().noneMatch(g -> Glob.matches(g, value.get()))) {
        return false;
      }
    }
    for (Filter f : notAttributes) {
      Optional<String> value = device.attribute(f.key());
      if (value.isPresent() && Glob.matches(f.value(), value.get())) {
        return false;
      }
    }
    if (!properties.isEmpty() && !anyProperty(device)) {
      return false;
    }
    if (!tags.isEmpty() && !device.tags().containsAll(tags)) {
      return false;
    }
    return true;
  }

  private boolean anyProperty(SysDevice device) {
    for (Filter f : properties) {
      for (Map.Entry<String, String> p : device.properties().entrySet()) {
        if (Glob.matches(f.key(), p.getKey()) && Glob.matches(f.value(), p.getValue())) {
          return true;
        }
      }
    }
    return false;
  }

  private boolean remainingAccept(SysDevice device) {
    for (Filter f : remaining) {
      if (!accepts(f, device)) {
        return false;
      }
    }
    return true;
  }

  private static boolean accepts(Filter f, SysDevice device) {
    boolean equal = f.equal();
    return switch (f.field()) {
      // Akri checks only != of these itself; == went to the enumerator.
      case DEVPATH -> !f.regexMatches(device.devpath());
      case KERNEL -> !f.regexMatches(device.sysname());
      case TAG -> device.properties().get("TAGS") == null || !anyTag(f, device);
      case ENV -> {
        String value = device.properties().get(f.key());
        yield value == null || !f.regexMatches(value);
      }
      case DRIVER -> device.driver().map(d -> equal == f.regexMatches(d)).orElse(!equal);
      case SUBSYSTEMS, KERNELS, DRIVERS, ATTRS, TAGS -> equal == selfOrAncestor(f, device);
      default -> throw new IllegalStateException("not a regular-expression filter: " + f);
    };
  }

  /** Akri splits the TAGS property (":a:b:") on ':' and tries every piece, empty ones too. */
  private static boolean anyTag(Filter f, SysDevice device) {
    String tags = device.properties().get("TAGS");
    if (tags == null) {
      return false;
    }
    for (String tag : tags.split(":", -1)) {
      if (f.regexMatches(tag)) {
        return true;
      }
    }
    return false;
  }

  private static boolean selfOrAncestor(Filter f, SysDevice device) {
    Optional<SysDevice> current = Optional.of(device);
    while (current.isPresent()) {
      SysDevice d = current.get();
      boolean hit =
          switch (f.field()) {
            case SUBSYSTEMS -> d.subsystem().map(f::regexMatches).orElse(false);
            case KERNELS -> f.regexMatches(d.sysname());
            case DRIVERS -> d.driver().map(f::regexMatches).orElse(false);
            case ATTRS -> d.attribute(f.key()).map(f::regexMatches).orElse(false);
            case TAGS -> anyTag(f, d);
            default -> false;
          };
      if (hit) {
        return true;
      }
      current = d.parent();
    }
    return false;
  }

  private static Match nearestNode(SysDevice device) {
    Optional<String> node = device.devnode();
    if (node.isPresent()) {
      return new Match(device.devpath(), node);
    }
    Optional<SysDevice> current = device.parent();
    while (current.isPresent()) {
      Optional<String> parentNode = current.get().devnode();
      if (parentNode.isPresent()) {
        return new Match(current.get().devpath(), parentNode);
      }
      current = current.get().parent();
    }
    return new Match(device.devpath(), Optional.empty());
  }
}
