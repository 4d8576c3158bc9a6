package io.jakri.handler.zeroconf;

import io.jakri.handler.Details;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Parsed;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The zeroconf handler's discovery details, parsed and checked.
 *
 * <pre>
 * kind: _http._tcp        # required DNS-SD service type
 * name: printer           # optional instance name (case-insensitive match)
 * domain: local           # default local
 * port: 8080              # optional
 * txtRecords: {a: b}      # optional, all must match (keys case-insensitive, values exact)
 * interfaces: [eth0]      # optional interface names or local addresses to browse on
 * </pre>
 *
 * @param kind the service type to browse
 * @param name the instance name to keep, if any
 * @param domain the domain without trailing dot
 * @param port the port to keep, if any
 * @param txtRecords TXT attributes a service must carry
 * @param interfaces interface names or address literals to browse on; empty means all suitable
 */
public record ZeroconfDetails(
    ServiceType kind,
    Optional<String> name,
    String domain,
    Optional<Integer> port,
    Map<String, String> txtRecords,
    List<String> interfaces) {

  /** The domain mDNS serves; other domains need unicast DNS-SD, which JmDNS does not do. */
  public static final String DEFAULT_DOMAIN = "local";

  private static final Pattern LABEL =
      Pattern.compile("[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?");
  private static final Pattern IPV4 =
      Pattern.compile(
          "(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}");
  private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]+(%[A-Za-z0-9_.-]+)?");
  private static final Pattern INTERFACE_NAME = Pattern.compile("[A-Za-z0-9_.:@-]{1,15}");

  public ZeroconfDetails {
    Objects.requireNonNull(kind, "kind");
    name = name == null ? Optional.empty() : name;
    Objects.requireNonNull(domain, "domain");
    port = port == null ? Optional.empty() : port;
    txtRecords = Map.copyOf(txtRecords == null ? Map.of() : txtRecords);
    interfaces = List.copyOf(interfaces == null ? List.of() : interfaces);
  }

  /** Parses and checks details YAML; never throws, collects every problem. Pure. */
  public static Parsed<ZeroconfDetails> parse(String yaml) {
    List<String> errors = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    Details d;
    try {
      d = Details.parse(yaml);
    } catch (InvalidDetailsException e) {
      return Parsed.failed(List.of("discoveryDetails: " + e.getMessage()), warnings);
    }

    Optional<ServiceType> kind = Optional.empty();
    try {
      Optional<String> raw = d.optionalString("kind");
      if (raw.isEmpty() || raw.get().isBlank()) {
        errors.add("kind is required: a DNS-SD service type such as _http._tcp");
      } else {
        kind = ServiceType.parse(raw.get());
        if (kind.isEmpty()) {
          errors.add(
              "kind must be a DNS-SD service type \"_<name>._tcp\" or \"_<name>._udp\" (name: 1-15"
                  + " letters, digits, hyphens) such as _http._tcp, but is \""
                  + shorten(raw.get())
                  + "\"");
        }
      }
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage());
    }

    Optional<String> name = Optional.empty();
    try {
      name = d.optionalString("name");
      if (name.isPresent()) {
        int bytes = name.get().getBytes(StandardCharsets.UTF_8).length;
        if (bytes == 0) {
          errors.add("name must not be empty (leave it out to accept every instance)");
        } else if (bytes > 63) {
          errors.add("name must be at most 63 bytes (a DNS label) but has " + bytes);
        }
      }
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage());
    }

    String domain = DEFAULT_DOMAIN;
    try {
      Optional<String> raw = d.optionalString("domain");
      if (raw.isPresent()) {
        String value = raw.get().strip();
        if (value.endsWith(".")) {
          value = value.substring(0, value.length() - 1);
        }
        if (!validDomain(value)) {
          errors.add(
              "domain must be a DNS domain name such as local, but is \""
                  + shorten(raw.get())
                  + "\"");
        } else {
          domain = value.toLowerCase(Locale.ROOT);
          if (!domain.equals(DEFAULT_DOMAIN)) {
            warnings.add(
                "domain "
                    + domain
                    + " is not local: mDNS only answers for .local, so probably nothing will be"
                    + " found");
          }
        }
      }
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage());
    }

    Optional<Integer> port = Optional.empty();
    try {
      port = d.optionalInt("port");
      if (port.isPresent() && (port.get() < 1 || port.get() > 65535)) {
        errors.add("port must be between 1 and 65535 but is " + port.get());
      }
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage());
    }

    Map<String, String> txt = Map.of();
    try {
      txt = d.stringMap("txtRecords");
      Set<String> lower = new HashSet<>();
      for (Map.Entry<String, String> e : txt.entrySet()) {
        String key = e.getKey();
        String field = "txtRecords." + key;
        if (key.isEmpty()) {
          errors.add("txtRecords has an empty key");
        } else if (!key.chars().allMatch(c -> c >= 0x20 && c <= 0x7E && c != '=')) {
          errors.add(field + ": a TXT key is printable ASCII without '=' (RFC 6763 §6.4)");
        } else if (!lower.add(key.toLowerCase(Locale.ROOT))) {
          errors.add(field + " repeats a key: TXT keys compare case-insensitively");
        } else if (key.length() + 1 + e.getValue().getBytes(StandardCharsets.UTF_8).length > 255) {
          errors.add(field + ": key=value is longer than a TXT string can be (255 bytes)");
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
        if (!isAddressLiteral(entry) && !INTERFACE_NAME.matcher(entry).matches()) {
          errors.add(
              "interfaces["
                  + i
                  + "] must be an interface name (e.g. eth0) or an IP address, but is \""
                  + shorten(entry)
                  + "\"");
        }
      }
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage());
    }

    for (String unknown : d.unknownKeys()) {
      warnings.add(unknown + " is not a zeroconf setting and is ignored");
    }

    if (!errors.isEmpty() || kind.isEmpty()) {
      return Parsed.failed(errors, warnings);
    }
    return Parsed.of(
        new ZeroconfDetails(kind.get(), name, domain, port, txt, interfaces), warnings);
  }

  /** Whether an {@code interfaces} entry is an IP address rather than an interface name. */
  static boolean isAddressLiteral(String entry) {
    return IPV4.matcher(entry).matches()
        || (IPV6.matcher(entry).matches() && entry.chars().filter(c -> c == ':').count() >= 2);
  }

  private static boolean validDomain(String domain) {
    if (domain.isEmpty() || domain.length() > 253) {
      return false;
    }
    for (String label : domain.split("\\.", -1)) {
      if (!LABEL.matcher(label).matches()) {
        return false;
      }
    }
    return true;
  }

  private static String shorten(String s) {
    return s.length() > 40 ? s.substring(0, 40) + "..." : s;
  }
}
