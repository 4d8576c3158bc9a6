package io.jakri.handler.coap;

import io.jakri.handler.Details;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Parsed;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The coap handler's discovery details, parsed and checked.
 *
 * <pre>
 * multicast: true              # GET to 224.0.1.187 (and ff02::fd); default true
 * ipv6: true                   # also ff02::fd; default true
 * port: 5683                   # the multicast destination port; default 5683
 * networkInterfaces: [eth0]    # names or local addresses; default every up, multicast one
 * hosts: [10.0.0.5, "10.0.0.6:5684", "[fd00::7]:5683"]   # unicast, IP literals
 * rt: [temperature]            # keep links with one of these resource types
 * if: [sensor]                 # keep links with one of these interface descriptions
 * paths: {include: ["/sensors/*"], exclude: ["/sensors/debug"]}
 * discoveryIntervalSeconds: 10 # pause between rounds, 1..3600
 * responseTimeoutMillis: 5500  # how long answers are collected per round, 50..30000
 * gracePeriodSeconds: 30       # an endpoint not answering this long is removed, 0..86400
 * </pre>
 */
public record CoapDetails(
    boolean multicast,
    boolean ipv6,
    int port,
    List<String> networkInterfaces,
    List<Endpoint> hosts,
    LinkFilter filter,
    Duration discoveryInterval,
    Duration responseTimeout,
    Duration gracePeriod) {

  public static final int DEFAULT_PORT = 5683;

  /**
   * RFC 7252's DEFAULT_LEISURE (5 s) plus a margin: servers delay answers to a multicast request by
   * a random time up to the leisure (libcoap does), so a shorter wait misses some.
   */
  public static final int DEFAULT_RESPONSE_TIMEOUT_MILLIS = 5500;

  static final int MAX_ITEMS = 256;
  private static final Pattern IPV4 =
      Pattern.compile(
          "(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}");
  private static final Pattern IPV6 =
      Pattern.compile("[0-9A-Fa-f:.]{2,45}(%[A-Za-z0-9_.-]{1,15})?");
  private static final Pattern INTERFACE = Pattern.compile("[A-Za-z0-9_.:@%-]{1,45}");
  private static final Pattern TOKEN = Pattern.compile("[!#-+\\--\\[\\]-~]{1,256}");

  public CoapDetails {
    networkInterfaces = List.copyOf(networkInterfaces);
    hosts = List.copyOf(hosts);
    Objects.requireNonNull(filter, "filter");
    Objects.requireNonNull(discoveryInterval, "discoveryInterval");
    Objects.requireNonNull(responseTimeout, "responseTimeout");
    Objects.requireNonNull(gracePeriod, "gracePeriod");
  }

  /** Parses and checks details YAML; never throws, collects every problem. Pure. */
  public static Parsed<CoapDetails> parse(String yaml) {
    List<String> errors = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    Details d;
    try {
      d = Details.parse(yaml);
    } catch (InvalidDetailsException e) {
      return Parsed.failed(List.of("discoveryDetails: " + e.getMessage() + where(e)), warnings);
    }
    boolean multicast = bool(d, "multicast", true, errors);
    boolean ipv6 = bool(d, "ipv6", true, errors);
    int port = integer(d, "port", DEFAULT_PORT, 1, 65535, "", errors);
    int interval = integer(d, "discoveryIntervalSeconds", 10, 1, 3600, "", errors);
    int timeout =
        integer(
            d,
            "responseTimeoutMillis",
            DEFAULT_RESPONSE_TIMEOUT_MILLIS,
            50,
            30000,
            " (how long answers to a GET are collected)",
            errors);
    int grace = integer(d, "gracePeriodSeconds", 30, 0, 86400, "", errors);

    List<String> interfaces = strings(d, "networkInterfaces", errors);
    for (int i = 0; i < interfaces.size(); i++) {
      if (!INTERFACE.matcher(interfaces.get(i)).matches()) {
        errors.add(
            "networkInterfaces["
                + i
                + "] must be an interface name (e.g. eth0) or a local address, but is \""
                + shorten(interfaces.get(i))
                + "\"");
      }
    }
    List<Endpoint> hosts = new ArrayList<>();
    List<String> rawHosts = strings(d, "hosts", errors);
    for (int i = 0; i < rawHosts.size(); i++) {
      Optional<Endpoint> e = endpoint(rawHosts.get(i));
      if (e.isEmpty()) {
        errors.add(
            "hosts["
                + i
                + "] must be an IP address with an optional port (10.0.0.5, 10.0.0.5:5684,"
                + " [fd00::1]:5683), but is \""
                + shorten(rawHosts.get(i))
                + "\"");
      } else {
        hosts.add(e.get());
      }
    }
    List<String> rt = tokens(d, "rt", errors);
    List<String> ifs = tokens(d, "if", errors);
    List<String> include = List.of();
    List<String> exclude = List.of();
    try {
      Optional<Details> paths = d.object("paths");
      if (paths.isPresent()) {
        include = pathList(paths.get(), "include", errors);
        exclude = pathList(paths.get(), "exclude", errors);
        for (String unknown : paths.get().unknownKeys()) {
          warnings.add(unknown + " is not a paths setting (include, exclude) and is ignored");
        }
      }
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage() + " with include and exclude");
    }
    if (!multicast && rawHosts.isEmpty()) {
      errors.add("multicast is false and hosts is empty: nothing would be asked");
    }
    if (multicast && timeout < 5000) {
      warnings.add(
          "responseTimeoutMillis is "
              + timeout
              + ": CoAP servers may delay answers to a multicast GET by up to 5000 ms (RFC 7252"
              + " DEFAULT_LEISURE), some will be missed in a round");
    }
    for (String unknown : d.unknownKeys()) {
      warnings.add(unknown + " is not a coap setting and is ignored");
    }
    if (!errors.isEmpty()) {
      return Parsed.failed(errors, warnings);
    }
    return Parsed.of(
        new CoapDetails(
            multicast,
            ipv6,
            port,
            interfaces,
            hosts,
            new LinkFilter(rt, ifs, include, exclude),
            Duration.ofSeconds(interval),
            Duration.ofMillis(timeout),
            Duration.ofSeconds(grace)),
        warnings);
  }

  /** An IP literal with an optional port; never looks a name up. */
  static Optional<Endpoint> endpoint(String text) {
    String host;
    String port = null;
    boolean v6;
    if (text.startsWith("[")) {
      int close = text.indexOf(']');
      if (close < 0) {
        return Optional.empty();
      }
      host = text.substring(1, close);
      String rest = text.substring(close + 1);
      if (!rest.isEmpty()) {
        if (!rest.startsWith(":")) {
          return Optional.empty();
        }
        port = rest.substring(1);
      }
      v6 = true;
    } else if (text.chars().filter(c -> c == ':').count() >= 2) {
      host = text;
      v6 = true;
    } else {
      int colon = text.indexOf(':');
      host = colon < 0 ? text : text.substring(0, colon);
      port = colon < 0 ? null : text.substring(colon + 1);
      v6 = false;
    }
    int number = DEFAULT_PORT;
    if (port != null) {
      if (!port.matches("\\d{1,5}")) {
        return Optional.empty();
      }
      number = Integer.parseInt(port);
      if (number < 1 || number > 65535) {
        return Optional.empty();
      }
    }
    if (v6 ? !IPV6.matcher(host).matches() : !IPV4.matcher(host).matches()) {
      return Optional.empty();
    }
    try {
      // A literal (with ':' or a dotted quad) is parsed, never looked up in DNS.
      InetAddress address = InetAddress.getByName(v6 ? "[" + host + "]" : host);
      return Optional.of(new Endpoint(address, number));
    } catch (UnknownHostException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  private static boolean bool(Details d, String key, boolean fallback, List<String> errors) {
    try {
      return d.optionalBoolean(key).orElse(fallback);
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage());
      return fallback;
    }
  }

  private static int integer(
      Details d, String key, int fallback, int min, int max, String why, List<String> errors) {
    try {
      Optional<Integer> raw = d.optionalInt(key);
      if (raw.isPresent() && (raw.get() < min || raw.get() > max)) {
        errors.add(key + " must be between " + min + " and " + max + why + " but is " + raw.get());
        return fallback;
      }
      return raw.orElse(fallback);
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage());
      return fallback;
    }
  }

  private static List<String> strings(Details d, String key, List<String> errors) {
    try {
      List<String> list = d.stringList(key);
      if (list.size() > MAX_ITEMS) {
        errors.add(key + " has " + list.size() + " entries; at most " + MAX_ITEMS + " are allowed");
        return List.of();
      }
      return list;
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage());
      return List.of();
    }
  }

  private static List<String> tokens(Details d, String key, List<String> errors) {
    List<String> list = strings(d, key, errors);
    for (int i = 0; i < list.size(); i++) {
      if (!TOKEN.matcher(list.get(i)).matches()) {
        errors.add(
            key
                + "["
                + i
                + "] must be one "
                + key
                + " value without spaces or quotes, but is \""
                + shorten(list.get(i))
                + "\"");
      }
    }
    return list;
  }

  private static List<String> pathList(Details paths, String key, List<String> errors) {
    List<String> list = strings(paths, key, errors);
    for (int i = 0; i < list.size(); i++) {
      String p = list.get(i);
      String field = paths.field(key) + "[" + i + "]";
      if (!p.startsWith("/") || p.length() > 256) {
        errors.add(
            field
                + " must be a path starting with / of at most 256 characters, but is \""
                + shorten(p)
                + "\"");
      } else if (p.indexOf('*') >= 0 && p.indexOf('*') != p.length() - 1) {
        errors.add(field + " may hold * only at its end (a prefix), but is \"" + shorten(p) + "\"");
      }
    }
    return list;
  }

  /** " at line L, column C" of a YAML syntax error, or "". */
  private static String where(InvalidDetailsException e) {
    return io.jakri.handler.YamlMarks.syntaxError(e).map(s -> " at " + s.lineColumn()).orElse("");
  }

  static String shorten(String s) {
    return s.length() > 40 ? s.substring(0, 40) + "..." : s;
  }
}
