package io.jakri.handler.zeroconf;

import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A DNS-SD service type such as {@code _http._tcp} (RFC 6763 §7): an application protocol name of 1
 * to 15 letters, digits and hyphens (no leading, trailing or doubled hyphen, at least one letter,
 * RFC 6335 §5.1) and the transport {@code _tcp} or {@code _udp}.
 *
 * @param application the service name without its underscore, e.g. {@code http}
 * @param transport {@code tcp} or {@code udp}
 */
public record ServiceType(String application, String transport) {

  private static final Pattern KIND =
      Pattern.compile("_([A-Za-z0-9](?:[A-Za-z0-9-]{0,13}[A-Za-z0-9])?)\\._((?i:tcp|udp))");

  public ServiceType {
    Objects.requireNonNull(application, "application");
    Objects.requireNonNull(transport, "transport");
  }

  /**
   * Parses a service type written as {@code _name._tcp} or {@code _name._udp}; transport is
   * case-insensitive, the application name keeps its case (DNS compares names case-insensitively).
   */
  public static Optional<ServiceType> parse(String kind) {
    if (kind == null) {
      return Optional.empty();
    }
    Matcher m = KIND.matcher(kind.strip());
    if (!m.matches()) {
      return Optional.empty();
    }
    String application = m.group(1);
    if (application.contains("--") || application.chars().noneMatch(Character::isLetter)) {
      return Optional.empty();
    }
    return Optional.of(new ServiceType(application, m.group(2).toLowerCase(Locale.ROOT)));
  }

  /** The type as users write it, e.g. {@code _http._tcp}. */
  public String kind() {
    return "_" + application + "._" + transport;
  }

  /** The fully qualified type JmDNS browses, e.g. {@code _http._tcp.local.}. */
  public String qualified(String domain) {
    return kind() + "." + domain + ".";
  }

  @Override
  public String toString() {
    return kind();
  }
}
