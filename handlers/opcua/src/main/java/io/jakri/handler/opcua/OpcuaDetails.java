package io.jakri.handler.opcua;

import io.jakri.handler.Details;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Parsed;
import io.jakri.handler.Problems;
import io.jakri.handler.SafeYaml;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The opcua handler's discovery details: Akri's schema, unchanged, plus an optional poll interval.
 *
 * <pre>
 * opcuaDiscoveryMethod:
 *   standard:
 *     discoveryUrls:             # default [opc.tcp://localhost:4840/]
 *     - opc.tcp://10.0.0.5:4840/
 * applicationNames:              # optional; Akri's FilterList
 *   action: Include              # Include (default) or Exclude
 *   items: [Boiler #1]
 * pollIntervalSeconds: 10        # jakri only: 1 to 3600, default 10 (Akri polls every 10 s)
 * </pre>
 *
 * @param discoveryUrls the discovery servers (LDS or servers themselves) to ask, in order, distinct
 * @param applicationNames the application name filter ({@link ApplicationNameFilter#NONE} when
 *     absent)
 * @param pollInterval how often each discovery URL is asked
 */
public record OpcuaDetails(
    List<OpcTcpUrl> discoveryUrls, ApplicationNameFilter applicationNames, Duration pollInterval) {

  /** Akri's default discovery URL: the local discovery server on the node. */
  public static final String DEFAULT_DISCOVERY_URL = "opc.tcp://localhost:4840/";

  /** Akri's interval between two rounds of FindServers. */
  public static final int DEFAULT_POLL_SECONDS = 10;

  /** Longest accepted poll interval (an hour). */
  public static final int MAX_POLL_SECONDS = 3600;

  /**
   * Most discovery URLs one Configuration may list. Each is polled on its own, so the cap bounds
   * the connections and the work one Configuration causes.
   */
  public static final int MAX_DISCOVERY_URLS = 256;

  public OpcuaDetails {
    discoveryUrls = List.copyOf(discoveryUrls);
    Objects.requireNonNull(applicationNames, "applicationNames");
    Objects.requireNonNull(pollInterval, "pollInterval");
  }

  /** Parses and checks details YAML; never throws, collects every problem. Pure. */
  public static Parsed<OpcuaDetails> parse(String yaml) {
    Problems problems = new Problems();
    Map<String, Object> raw;
    try {
      raw = SafeYaml.loadMap(yaml);
    } catch (InvalidDetailsException e) {
      return Parsed.failed(List.of("discoveryDetails: " + e.getMessage()), List.of());
    }
    Details d = Details.of("", raw);

    List<OpcTcpUrl> urls = new ArrayList<>();
    Object method = raw.get("opcuaDiscoveryMethod");
    d.has("opcuaDiscoveryMethod");
    if (method == null) {
      problems.error(
          "opcuaDiscoveryMethod is required (Akri's schema), e.g. opcuaDiscoveryMethod: {standard:"
              + " {discoveryUrls: [\""
              + DEFAULT_DISCOVERY_URL
              + "\"]}}");
    } else if (!(method instanceof Map<?, ?> methods)) {
      problems.error("opcuaDiscoveryMethod must be a mapping with one key, standard");
    } else if (methods.size() != 1 || !methods.containsKey("standard")) {
      List<String> others = methods.keySet().stream().map(String::valueOf).toList();
      problems.error(
          "opcuaDiscoveryMethod must name exactly one method, standard (the only one Akri has),"
              + " but names "
              + (others.isEmpty() ? "none" : others));
    } else {
      readStandard(methods.get("standard"), urls, problems);
    }

    ApplicationNameFilter filter = ApplicationNameFilter.NONE;
    Optional<Details> names = problems.readOptional(() -> d.object("applicationNames"));
    if (names.isPresent()) {
      filter = readFilter(names.get(), problems).orElse(filter);
    }

    int seconds = DEFAULT_POLL_SECONDS;
    Optional<Integer> poll = problems.readOptional(() -> d.optionalInt("pollIntervalSeconds"));
    if (poll.isPresent()) {
      if (poll.get() < 1 || poll.get() > MAX_POLL_SECONDS) {
        problems.error(
            "pollIntervalSeconds must be between 1 and "
                + MAX_POLL_SECONDS
                + " but is "
                + poll.get());
      } else {
        seconds = poll.get();
      }
    }

    for (String unknown : d.unknownKeys()) {
      problems.warn(unknown + " is not an opcua setting and is ignored");
    }
    if (!problems.errors().isEmpty()) {
      return Parsed.failed(problems.errors(), problems.warnings());
    }
    return Parsed.of(
        new OpcuaDetails(urls, filter, Duration.ofSeconds(seconds)), problems.warnings());
  }

  private static void readStandard(Object standard, List<OpcTcpUrl> urls, Problems problems) {
    String field = "opcuaDiscoveryMethod.standard";
    if (standard != null && !(standard instanceof Map)) {
      problems.error(field + " must be a mapping (it may be empty: standard: {})");
      return;
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> values = standard == null ? Map.of() : (Map<String, Object>) standard;
    Details s = Details.of(field, values);
    List<String> given;
    if (values.containsKey("discoveryUrls") && values.get("discoveryUrls") != null) {
      Optional<List<String>> list = problems.read(() -> s.stringList("discoveryUrls"));
      if (list.isEmpty()) {
        return;
      }
      given = list.get();
      if (given.isEmpty()) {
        problems.warn(field + ".discoveryUrls is empty: no server will be discovered");
      }
    } else {
      s.has("discoveryUrls");
      given = List.of(DEFAULT_DISCOVERY_URL);
    }
    if (given.size() > MAX_DISCOVERY_URLS) {
      problems.error(
          field
              + ".discoveryUrls has "
              + given.size()
              + " entries; at most "
              + MAX_DISCOVERY_URLS
              + " are allowed (split them over several Configurations or use a discovery server)");
      return;
    }
    Set<String> seen = new LinkedHashSet<>();
    for (int i = 0; i < given.size(); i++) {
      String entry = given.get(i).strip();
      OpcTcpUrl.Result parsed = OpcTcpUrl.parse(entry);
      String name = field + ".discoveryUrls[" + i + "]";
      if (parsed.url().isEmpty()) {
        problems.error(
            name
                + " must be an opc.tcp://host:port/ URL, but \""
                + shorten(entry)
                + "\" is not usable: "
                + parsed.problem());
        continue;
      }
      OpcTcpUrl url = parsed.url().get();
      if (url.port().isEmpty()) {
        problems.warn(name + " names no port: OPC UA's " + OpcTcpUrl.DEFAULT_PORT + " is used");
      }
      if (!seen.add(url.text())) {
        problems.warn(name + " repeats " + url.text() + " and is ignored");
        continue;
      }
      urls.add(url);
    }
    for (String unknown : s.unknownKeys()) {
      problems.warn(unknown + " is not an opcua setting and is ignored");
    }
  }

  private static Optional<ApplicationNameFilter> readFilter(Details names, Problems problems) {
    ApplicationNameFilter.Action action = ApplicationNameFilter.Action.INCLUDE;
    Optional<String> rawAction = problems.readOptional(() -> names.optionalString("action"));
    boolean ok = true;
    if (rawAction.isPresent()) {
      Optional<ApplicationNameFilter.Action> matched = Optional.empty();
      for (ApplicationNameFilter.Action a : ApplicationNameFilter.Action.values()) {
        if (a.yaml().equals(rawAction.get())) {
          matched = Optional.of(a);
        }
      }
      if (matched.isEmpty()) {
        problems.error(
            names.field("action")
                + " must be Include or Exclude but is \""
                + shorten(rawAction.get())
                + "\"");
        ok = false;
      } else {
        action = matched.get();
      }
    }
    Optional<List<String>> items = problems.read(() -> names.stringList("items"));
    if (items.isEmpty()) {
      return Optional.empty();
    }
    for (String unknown : names.unknownKeys()) {
      problems.warn(unknown + " is not an opcua setting and is ignored");
    }
    if (!ok) {
      return Optional.empty();
    }
    if (action == ApplicationNameFilter.Action.INCLUDE && items.get().isEmpty()) {
      problems.warn(
          "applicationNames: action Include with no items admits no server (as in Akri); use"
              + " action: Exclude to admit every server");
    }
    return Optional.of(new ApplicationNameFilter(action, items.get()));
  }

  private static String shorten(String s) {
    String printable = Printable.of(s);
    return printable.length() > 60 ? printable.substring(0, 60) + "..." : printable;
  }
}
