package io.jakri.handler.udev;

import io.jakri.handler.Details;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Parsed;
import io.jakri.handler.Problems;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The udev handler's discovery details, Akri's schema plus one optional jakri key:
 *
 * <pre>
 * udevRules:                  # required, at least one rule
 *   - KERNEL=="video[0-9]*"
 * groupRecursive: false       # default false: group matches under their top-most matched device
 * permissions: rwm            # default rwm: r, w, m, rw, rm, wm or rwm (in that order)
 * rescanIntervalSeconds: 30   # jakri only, default 30 (1..3600): the slow periodic rescan
 * </pre>
 *
 * @param rules the parsed rules, in order
 * @param groupRecursive whether matches below another match join its device
 * @param permissions the cgroup permissions of every device spec
 * @param rescanInterval how often sysfs is scanned without an event
 */
record UdevDetails(
    List<UdevRule> rules, boolean groupRecursive, String permissions, Duration rescanInterval) {

  /** Most rules per Configuration. */
  static final int MAX_RULES = 1000;

  static final String DEFAULT_PERMISSIONS = "rwm";
  static final Duration DEFAULT_RESCAN = Duration.ofSeconds(30);
  private static final List<String> PERMISSIONS = List.of("r", "w", "m", "rw", "rm", "wm", "rwm");

  UdevDetails {
    rules = List.copyOf(rules);
    Objects.requireNonNull(permissions, "permissions");
    Objects.requireNonNull(rescanInterval, "rescanInterval");
  }

  /** Parses and checks details YAML; never throws, collects every problem. */
  static Parsed<UdevDetails> parse(String yaml) {
    Details d;
    try {
      d = Details.parse(yaml);
    } catch (InvalidDetailsException e) {
      return Parsed.failed(List.of("discoveryDetails: " + e.getMessage()), List.of());
    }
    Problems problems = new Problems();
    List<UdevRule> rules = new ArrayList<>();
    Optional<List<String>> texts = problems.read(() -> d.stringList("udevRules"));
    if (texts.isPresent()) {
      if (texts.get().isEmpty()) {
        problems.error(
            "udevRules is required: a list of at least one udev rule such as KERNEL==\"video[0-9]*\"");
      } else if (texts.get().size() > MAX_RULES) {
        problems.error(
            "udevRules has "
                + texts.get().size()
                + " rules; at most "
                + MAX_RULES
                + " are accepted");
      } else {
        for (int i = 0; i < texts.get().size(); i++) {
          int index = i;
          Optional<UdevRule> rule =
              problems.read(() -> UdevRule.parse(index, texts.get().get(index)));
          rule.ifPresent(
              r -> {
                rules.add(r);
                r.warnings().forEach(problems::warn);
              });
        }
      }
    }
    boolean group = problems.readOptional(() -> d.optionalBoolean("groupRecursive")).orElse(false);
    Optional<String> permissions = problems.readOptional(() -> d.optionalString("permissions"));
    if (permissions.isPresent() && !PERMISSIONS.contains(permissions.get())) {
      problems.error(
          "permissions must be one of r, w, m, rw, rm, wm, rwm (letters in that order) but is \""
              + shorten(permissions.get())
              + "\"");
    }
    Optional<Integer> rescan = problems.readOptional(() -> d.optionalInt("rescanIntervalSeconds"));
    if (rescan.isPresent() && (rescan.get() < 1 || rescan.get() > 3600)) {
      problems.error("rescanIntervalSeconds must be between 1 and 3600 but is " + rescan.get());
    }
    for (String unknown : d.unknownKeys()) {
      problems.warn(unknown + " is not a udev discovery detail and is ignored");
    }
    if (!problems.errors().isEmpty()) {
      return Parsed.failed(problems.errors(), problems.warnings());
    }
    return Parsed.of(
        new UdevDetails(
            rules,
            group,
            permissions.orElse(DEFAULT_PERMISSIONS),
            rescan.map(Duration::ofSeconds).orElse(DEFAULT_RESCAN)),
        problems.warnings());
  }

  private static String shorten(String s) {
    return s.length() > 40 ? s.substring(0, 37) + "..." : s;
  }
}
