package io.jakri.handler.modbus;

import io.jakri.handler.Details;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Parsed;
import io.jakri.handler.Problems;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The modbus handler's discovery details, checked.
 *
 * <pre>
 * addresses: [10.0.0.0/28, 10.0.1.7, plc-3.example.com]   # required: CIDRs, IPs, host names
 * ports: [502]                  # default [502]
 * unitIds: [1, 255]             # default [1, 255]: tried in order, the first that answers
 * eachUnit: false               # true: every listed unit that answers is a device (gateways)
 * vendor:      {action: Include, items: [Acme]}              # optional, Akri's filter style
 * productCode: {action: Exclude, items: ["X-.*"], match: Regex}
 * revision:    {action: Include, items: ["1\\..*"], match: Regex}
 * scanIntervalSeconds: 30       # 1..3600
 * gracePeriodSeconds: 60        # 0..86400: how long a silent device stays
 * timeoutMillis: 1000           # 50..30000, per connection attempt and per request
 * connectionsPerSecond: 50      # 1..1000: scan rate limit
 * maxAddresses: 256             # 1..4096: cap on the addresses the entries may stand for
 * </pre>
 */
record ModbusDetails(
    List<Target> addresses,
    List<Integer> ports,
    List<Integer> unitIds,
    boolean eachUnit,
    IdentityFilter vendor,
    IdentityFilter productCode,
    IdentityFilter revision,
    Duration scanInterval,
    Duration gracePeriod,
    Duration timeout,
    int connectionsPerSecond,
    int maxAddresses) {

  static final int DEFAULT_PORT = 502;
  static final List<Integer> DEFAULT_UNIT_IDS = List.of(1, 255);
  static final int DEFAULT_MAX_ADDRESSES = 256;
  static final int MAX_MAX_ADDRESSES = 4096;
  static final int MAX_UNIT_IDS = 8;
  static final int MAX_PORTS = 16;
  static final int MAX_FILTER_ITEMS = 64;

  ModbusDetails {
    addresses = List.copyOf(addresses);
    ports = List.copyOf(ports);
    unitIds = List.copyOf(unitIds);
    Objects.requireNonNull(vendor, "vendor");
    Objects.requireNonNull(productCode, "productCode");
    Objects.requireNonNull(revision, "revision");
  }

  /** Whether an identity passes the three filters. */
  boolean admits(Identity identity) {
    return vendor.admits(identity.vendor())
        && productCode.admits(identity.productCode())
        && revision.admits(identity.revision());
  }

  /** Parses and checks details YAML; never throws, collects every problem. Pure. */
  static Parsed<ModbusDetails> parse(String yaml) {
    Details d;
    try {
      d = Details.parse(yaml);
    } catch (InvalidDetailsException e) {
      return Parsed.failed(
          List.of("discoveryDetails: " + e.getMessage() + syntaxPosition(yaml)), List.of());
    }
    Problems problems = new Problems();
    int cap = intIn(d, "maxAddresses", 1, MAX_MAX_ADDRESSES, DEFAULT_MAX_ADDRESSES, problems);
    List<Target> targets = readAddresses(d, cap, problems);
    List<Integer> ports =
        readIntList(d, "ports", 1, 65_535, List.of(DEFAULT_PORT), MAX_PORTS, problems);
    List<Integer> units =
        readIntList(d, "unitIds", 0, 255, DEFAULT_UNIT_IDS, MAX_UNIT_IDS, problems);
    boolean eachUnit = problems.readOptional(() -> d.optionalBoolean("eachUnit")).orElse(false);
    IdentityFilter vendor = readFilter(d, "vendor", problems);
    IdentityFilter product = readFilter(d, "productCode", problems);
    IdentityFilter revision = readFilter(d, "revision", problems);
    int interval = intIn(d, "scanIntervalSeconds", 1, 3600, 30, problems);
    int grace = intIn(d, "gracePeriodSeconds", 0, 86_400, 60, problems);
    int timeout = intIn(d, "timeoutMillis", 50, 30_000, 1000, problems);
    int rate = intIn(d, "connectionsPerSecond", 1, 1000, 50, problems);
    for (String unknown : d.unknownKeys()) {
      problems.warn(unknown + " is not a modbus setting and is ignored");
    }
    if (!problems.errors().isEmpty()) {
      return Parsed.failed(problems.errors(), problems.warnings());
    }
    return Parsed.of(
        new ModbusDetails(
            targets,
            ports,
            units,
            eachUnit,
            vendor,
            product,
            revision,
            Duration.ofSeconds(interval),
            Duration.ofSeconds(grace),
            Duration.ofMillis(timeout),
            rate,
            cap),
        problems.warnings());
  }

  private static List<Target> readAddresses(Details d, int cap, Problems problems) {
    if (!d.has("addresses")) {
      problems.error(
          "addresses is required: the hosts and CIDR blocks to scan, e.g. addresses: [10.0.0.0/28]"
              + " (nothing outside them is ever connected to)");
      return List.of();
    }
    Optional<List<String>> given = problems.read(() -> d.stringList("addresses"));
    if (given.isEmpty()) {
      return List.of();
    }
    if (given.get().isEmpty()) {
      problems.warn("addresses is empty: no device will be discovered");
    }
    List<Target> targets = new ArrayList<>();
    Set<Target> seen = new LinkedHashSet<>();
    long total = 0;
    for (int i = 0; i < given.get().size(); i++) {
      String entry = given.get().get(i).strip();
      String field = d.field("addresses") + "[" + i + "] \"" + shorten(entry) + "\"";
      Target.Result parsed = Target.parse(entry);
      if (parsed.target().isEmpty()) {
        problems.error(field + ": column " + parsed.column() + ": " + parsed.problem());
        continue;
      }
      Target target = parsed.target().get();
      if (target.size() > cap) {
        problems.error(
            field
                + ": "
                + (target.size() == Long.MAX_VALUE ? "more than 2^62" : target.size())
                + " addresses, more than maxAddresses ("
                + cap
                + "): list a smaller block or raise maxAddresses (at most "
                + MAX_MAX_ADDRESSES
                + ")");
        continue;
      }
      if (!seen.add(target)) {
        problems.warn(field + " repeats an earlier entry and is ignored");
        continue;
      }
      total += target.size();
      targets.add(target);
    }
    if (total > cap) {
      problems.error(
          d.field("addresses")
              + " stand for "
              + total
              + " addresses in all, more than maxAddresses ("
              + cap
              + ")");
    }
    return targets;
  }

  private static List<Integer> readIntList(
      Details d,
      String key,
      int min,
      int max,
      List<Integer> fallback,
      int maxEntries,
      Problems problems) {
    if (!d.has(key)) {
      return fallback;
    }
    Optional<List<String>> given = problems.read(() -> d.stringList(key));
    if (given.isEmpty()) {
      return fallback;
    }
    if (given.get().isEmpty()) {
      problems.error(d.field(key) + " must not be empty");
      return fallback;
    }
    if (given.get().size() > maxEntries) {
      problems.error(
          d.field(key) + " has " + given.get().size() + " entries, at most " + maxEntries);
      return fallback;
    }
    Set<Integer> values = new LinkedHashSet<>();
    for (int i = 0; i < given.get().size(); i++) {
      String raw = given.get().get(i).strip();
      String field = d.field(key) + "[" + i + "]";
      if (!raw.matches("[0-9]{1,5}")
          || Integer.parseInt(raw) < min
          || Integer.parseInt(raw) > max) {
        problems.error(
            field
                + " must be a number from "
                + min
                + " to "
                + max
                + " but is \""
                + shorten(raw)
                + "\"");
        continue;
      }
      if (!values.add(Integer.parseInt(raw))) {
        problems.warn(field + " repeats " + raw + " and is ignored");
      }
    }
    return List.copyOf(values);
  }

  private static IdentityFilter readFilter(Details d, String key, Problems problems) {
    Optional<Details> filter = problems.readOptional(() -> d.object(key));
    if (filter.isEmpty()) {
      return IdentityFilter.NONE;
    }
    Details f = filter.get();
    boolean ok = true;
    IdentityFilter.Action action = IdentityFilter.Action.Include;
    Optional<String> rawAction = problems.readOptional(() -> f.optionalString("action"));
    if (rawAction.isPresent()) {
      try {
        action = IdentityFilter.Action.valueOf(rawAction.get());
      } catch (IllegalArgumentException e) {
        problems.error(
            f.field("action")
                + " must be Include or Exclude but is \""
                + shorten(rawAction.get())
                + "\"");
        ok = false;
      }
    }
    IdentityFilter.Match match = IdentityFilter.Match.Exact;
    Optional<String> rawMatch = problems.readOptional(() -> f.optionalString("match"));
    if (rawMatch.isPresent()) {
      try {
        match = IdentityFilter.Match.valueOf(rawMatch.get());
      } catch (IllegalArgumentException e) {
        problems.error(
            f.field("match")
                + " must be Exact or Regex but is \""
                + shorten(rawMatch.get())
                + "\"");
        ok = false;
      }
    }
    if (!f.has("items")) {
      problems.error(f.field("items") + " is required (as in Akri's filters)");
      return IdentityFilter.NONE;
    }
    Optional<List<String>> items = problems.read(() -> f.stringList("items"));
    if (items.isEmpty()) {
      return IdentityFilter.NONE;
    }
    if (items.get().size() > MAX_FILTER_ITEMS) {
      problems.error(
          f.field("items")
              + " has "
              + items.get().size()
              + " entries, at most "
              + MAX_FILTER_ITEMS);
      ok = false;
    }
    if (match == IdentityFilter.Match.Regex) {
      for (int i = 0; i < items.get().size(); i++) {
        String item = items.get().get(i);
        try {
          Pattern.compile(item);
        } catch (PatternSyntaxException e) {
          problems.error(
              f.field("items")
                  + "["
                  + i
                  + "] \""
                  + shorten(item)
                  + "\": column "
                  + (Math.max(e.getIndex(), 0) + 1)
                  + ": bad regular expression: "
                  + e.getDescription());
          ok = false;
        }
      }
    }
    for (String unknown : f.unknownKeys()) {
      problems.warn(unknown + " is not a modbus setting and is ignored");
    }
    if (action == IdentityFilter.Action.Include && items.get().isEmpty()) {
      problems.warn(
          f.field("items") + " is empty with action Include: no device is admitted (as in Akri)");
    }
    return ok ? new IdentityFilter(action, match, items.get()) : IdentityFilter.NONE;
  }

  private static int intIn(
      Details d, String key, int min, int max, int fallback, Problems problems) {
    Optional<Integer> value = problems.readOptional(() -> d.optionalInt(key));
    if (value.isEmpty()) {
      return fallback;
    }
    if (value.get() < min || value.get() > max) {
      problems.error(
          d.field(key) + " must be between " + min + " and " + max + " but is " + value.get());
      return fallback;
    }
    return value.get();
  }

  /**
   * Where YAML that SafeYaml refused breaks, as {@code " (line L, column C: problem)"}: the text is
   * run through snakeyaml's parser only (events, nothing constructed, so no alias expansion), and
   * only when it is small enough for SafeYaml to have read it at all.
   */
  static String syntaxPosition(String yaml) {
    return io.jakri.handler.YamlMarks.firstSyntaxError(yaml)
        .map(e -> " (" + e.lineColumn() + ": " + e.problem() + ")")
        .orElse("");
  }

  private static String shorten(String s) {
    StringBuilder out = new StringBuilder();
    for (char c : s.toCharArray()) {
      out.append(c >= 0x20 && c < 0x7F ? c : '?');
    }
    return out.length() > 60 ? out.substring(0, 60) + "..." : out.toString();
  }
}
