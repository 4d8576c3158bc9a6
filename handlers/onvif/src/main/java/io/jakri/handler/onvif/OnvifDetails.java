package io.jakri.handler.onvif;

import io.jakri.handler.Details;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Parsed;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The onvif handler's discovery details, parsed and checked: Akri's schema plus three optional
 * jakri settings.
 *
 * <pre>
 * ipAddresses:  {action: Include|Exclude, items: [10.0.0.1]}   # Akri; optional
 * macAddresses: {action: Exclude, items: []}                    # Akri; optional
 * scopes:       {action: Include, items: [onvif://www.onvif.org/name/Cam]}   # Akri; optional
 * uuids:        {action: Exclude, items: [...]}                 # Akri; optional
 * discoveryTimeoutSeconds: 1                                    # Akri; 1..60, default 1
 * probeType: {prefix: netwsdl, namespace: http://www.onvif.org/ver10/network/wsdl,
 *             name: NetworkVideoTransmitter}                    # jakri; default Akri's
 * interfaces: [eth0]                                            # jakri; default every suitable one
 * discoveryIntervalSeconds: 10                                  # jakri; Akri's fixed 10 s
 * </pre>
 *
 * @param ipAddresses the IP address filter, if any
 * @param macAddresses the MAC address filter, if any
 * @param scopes the scope filter, if any
 * @param uuids the UUID filter, if any
 * @param discoveryTimeout how long ProbeMatches are collected after each probe
 * @param probeType what the probe asks for
 * @param interfaces interface names or local IPv4 addresses to probe on; empty = every interface
 *     that is up, multicast-capable, not loopback and has an IPv4 address
 * @param discoveryInterval the pause between the end of one discovery round and the next probe
 */
public record OnvifDetails(
    Optional<FilterList> ipAddresses,
    Optional<FilterList> macAddresses,
    Optional<FilterList> scopes,
    Optional<FilterList> uuids,
    Duration discoveryTimeout,
    ProbeType probeType,
    List<String> interfaces,
    Duration discoveryInterval) {

  public static final int DEFAULT_TIMEOUT_SECONDS = 1;
  public static final int MAX_TIMEOUT_SECONDS = 60;
  public static final int DEFAULT_INTERVAL_SECONDS = 10;
  public static final int MAX_INTERVAL_SECONDS = 3600;
  static final int MAX_FILTER_ITEMS = 1024;
  static final int MAX_ITEM_LENGTH = 1024;

  private static final Pattern IPV4 =
      Pattern.compile(
          "(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}");
  private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]{2,45}");
  private static final Pattern MAC = Pattern.compile("[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}");
  private static final Pattern INTERFACE_NAME = Pattern.compile("[A-Za-z0-9_.:@-]{1,15}");

  public OnvifDetails {
    ipAddresses = ipAddresses == null ? Optional.empty() : ipAddresses;
    macAddresses = macAddresses == null ? Optional.empty() : macAddresses;
    scopes = scopes == null ? Optional.empty() : scopes;
    uuids = uuids == null ? Optional.empty() : uuids;
    Objects.requireNonNull(discoveryTimeout, "discoveryTimeout");
    Objects.requireNonNull(probeType, "probeType");
    interfaces = List.copyOf(interfaces == null ? List.of() : interfaces);
    Objects.requireNonNull(discoveryInterval, "discoveryInterval");
  }

  /** Details as an empty Configuration gets them: no filters, Akri's timeout and probe type. */
  public static OnvifDetails defaults() {
    return new OnvifDetails(
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        Duration.ofSeconds(DEFAULT_TIMEOUT_SECONDS),
        ProbeType.NETWORK_VIDEO_TRANSMITTER,
        List.of(),
        Duration.ofSeconds(DEFAULT_INTERVAL_SECONDS));
  }

  private enum ItemKind {
    IP,
    MAC,
    SCOPE,
    UUID
  }

  /** Parses and checks details YAML; never throws, collects every problem. Pure. */
  public static Parsed<OnvifDetails> parse(String yaml) {
    List<String> errors = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    Details d;
    try {
      d = Details.parse(yaml);
    } catch (InvalidDetailsException e) {
      return Parsed.failed(List.of("discoveryDetails: " + e.getMessage()), warnings);
    }
    Optional<FilterList> ip = filter(d, "ipAddresses", ItemKind.IP, errors, warnings);
    Optional<FilterList> mac = filter(d, "macAddresses", ItemKind.MAC, errors, warnings);
    Optional<FilterList> scopes = filter(d, "scopes", ItemKind.SCOPE, errors, warnings);
    Optional<FilterList> uuids = filter(d, "uuids", ItemKind.UUID, errors, warnings);

    int timeout = DEFAULT_TIMEOUT_SECONDS;
    try {
      Optional<Integer> raw = d.optionalInt("discoveryTimeoutSeconds");
      if (raw.isPresent()) {
        timeout = raw.get();
        if (timeout < 1 || timeout > MAX_TIMEOUT_SECONDS) {
          errors.add(
              "discoveryTimeoutSeconds must be between 1 and "
                  + MAX_TIMEOUT_SECONDS
                  + " (how long ProbeMatches are collected; cameras answer within a second)"
                  + " but is "
                  + timeout);
        }
      }
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage());
    }

    int interval = DEFAULT_INTERVAL_SECONDS;
    try {
      Optional<Integer> raw = d.optionalInt("discoveryIntervalSeconds");
      if (raw.isPresent()) {
        interval = raw.get();
        if (interval < 1 || interval > MAX_INTERVAL_SECONDS) {
          errors.add(
              "discoveryIntervalSeconds must be between 1 and "
                  + MAX_INTERVAL_SECONDS
                  + " but is "
                  + interval);
        }
      }
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage());
    }

    ProbeType probeType = ProbeType.NETWORK_VIDEO_TRANSMITTER;
    try {
      Optional<Details> raw = d.object("probeType");
      if (raw.isPresent()) {
        Details p = raw.get();
        String prefix = p.optionalString("prefix").orElse(probeType.prefix());
        String namespace = p.optionalString("namespace").orElse(probeType.namespace());
        String name = p.optionalString("name").orElse(probeType.name());
        boolean ok = true;
        if (!ProbeType.NCNAME.matcher(prefix).matches()
            || prefix.toLowerCase(Locale.ROOT).startsWith("xml")) {
          errors.add(
              "probeType.prefix must be an XML namespace prefix such as dn but is \""
                  + shorten(prefix)
                  + "\"");
          ok = false;
        }
        if (!ProbeType.NCNAME.matcher(name).matches()) {
          errors.add(
              "probeType.name must be an XML local name such as NetworkVideoTransmitter"
                  + " but is \""
                  + shorten(name)
                  + "\"");
          ok = false;
        }
        if (!absoluteUri(namespace)) {
          errors.add(
              "probeType.namespace must be an absolute URI of at most 256 characters such"
                  + " as "
                  + ProbeType.ONVIF_NETWORK_NS
                  + " but is \""
                  + shorten(namespace)
                  + "\"");
          ok = false;
        }
        for (String unknown : p.unknownKeys()) {
          warnings.add(unknown + " is not a probeType setting and is ignored");
        }
        if (ok) {
          probeType = new ProbeType(prefix, namespace, name);
        }
      }
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage());
    }

    List<String> interfaces = List.of();
    try {
      interfaces = d.stringList("interfaces");
      for (int i = 0; i < interfaces.size(); i++) {
        String entry = interfaces.get(i);
        if (!IPV4.matcher(entry).matches() && !INTERFACE_NAME.matcher(entry).matches()) {
          errors.add(
              "interfaces["
                  + i
                  + "] must be an interface name (e.g. eth0) or a local IPv4"
                  + " address, but is \""
                  + shorten(entry)
                  + "\"");
        }
      }
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage());
    }

    for (String unknown : d.unknownKeys()) {
      warnings.add(unknown + " is not an onvif setting and is ignored");
    }
    if (!errors.isEmpty()) {
      return Parsed.failed(errors, warnings);
    }
    return Parsed.of(
        new OnvifDetails(
            ip,
            mac,
            scopes,
            uuids,
            Duration.ofSeconds(timeout),
            probeType,
            interfaces,
            Duration.ofSeconds(interval)),
        warnings);
  }

  private static Optional<FilterList> filter(
      Details d, String key, ItemKind kind, List<String> errors, List<String> warnings) {
    Optional<Details> raw;
    try {
      raw = d.object(key);
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage() + " with action and items");
      return Optional.empty();
    }
    if (raw.isEmpty()) {
      return Optional.empty();
    }
    Details f = raw.get();
    int before = errors.size();
    FilterList.Action action = FilterList.Action.Include;
    try {
      Optional<String> a = f.optionalString("action");
      if (a.isPresent()) {
        try {
          action = FilterList.Action.valueOf(a.get());
        } catch (IllegalArgumentException e) {
          errors.add(
              key + ".action must be Include or Exclude but is \"" + shorten(a.get()) + "\"");
        }
      }
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage());
    }
    List<String> items = List.of();
    try {
      if (!f.has("items")) {
        errors.add(key + ".items is required (a list, may be empty), as in Akri");
      } else {
        items = f.stringList("items");
        if (items.size() > MAX_FILTER_ITEMS) {
          errors.add(
              key
                  + ".items has "
                  + items.size()
                  + " entries; at most "
                  + MAX_FILTER_ITEMS
                  + " are allowed");
        }
        for (int i = 0; i < items.size() && i < MAX_FILTER_ITEMS; i++) {
          String field = key + ".items[" + i + "]";
          itemProblem(kind, items.get(i)).ifPresent(p -> errors.add(field + p));
        }
      }
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage());
    }
    for (String unknown : f.unknownKeys()) {
      warnings.add(unknown + " is not a filter setting and is ignored");
    }
    if (errors.size() > before) {
      return Optional.empty();
    }
    if (items.isEmpty() && action == FilterList.Action.Include) {
      warnings.add(
          key
              + ": action Include with no items lets no camera through (as in Akri);"
              + " use action Exclude with no items for no filter");
    }
    return Optional.of(new FilterList(action, items));
  }

  private static Optional<String> itemProblem(ItemKind kind, String item) {
    if (item.isEmpty() || item.length() > MAX_ITEM_LENGTH) {
      return Optional.of(" must be 1 to " + MAX_ITEM_LENGTH + " characters long");
    }
    return switch (kind) {
      case IP ->
          isIpLiteral(item)
              ? Optional.empty()
              : Optional.of(
                  " must be an IPv4 or IPv6 address such as 10.0.0.1 but is \""
                      + shorten(item)
                      + "\"");
      case MAC ->
          MAC.matcher(item).matches()
              ? Optional.empty()
              : Optional.of(
                  " must be a MAC address such as 00:12:41:5c:a1:a5 but is \""
                      + shorten(item)
                      + "\"");
      case SCOPE ->
          item.chars().anyMatch(Character::isWhitespace)
              ? Optional.of(
                  " must not contain whitespace (scopes are whitespace-separated) but is \""
                      + shorten(item)
                      + "\"")
              : Optional.empty();
      case UUID ->
          item.chars().anyMatch(c -> Character.isWhitespace(c) || c < 0x20)
              ? Optional.of(" must not contain whitespace but is \"" + shorten(item) + "\"")
              : Optional.empty();
    };
  }

  /** Whether {@code s} is an IPv4 dotted quad or an IPv6 literal (never resolves names). */
  static boolean isIpLiteral(String s) {
    if (IPV4.matcher(s).matches()) {
      return true;
    }
    if (!IPV6.matcher(s).matches() || s.chars().filter(c -> c == ':').count() < 2) {
      return false;
    }
    try {
      // A string with ':' is parsed as an IPv6 literal by InetAddress, never looked up in DNS.
      return java.net.InetAddress.getByName("[" + s + "]") instanceof java.net.Inet6Address;
    } catch (java.net.UnknownHostException e) {
      return false;
    }
  }

  private static boolean absoluteUri(String s) {
    if (s.isEmpty() || s.length() > 256) {
      return false;
    }
    try {
      URI uri = new URI(s);
      return uri.isAbsolute();
    } catch (URISyntaxException e) {
      return false;
    }
  }

  static String shorten(String s) {
    return s.length() > 40 ? s.substring(0, 40) + "..." : s;
  }
}
