package io.jakri.handler.zeroconf;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Turns a service into device properties (container env vars), treating everything from the network
 * as hostile.
 *
 * <p>Fixed properties: {@code AKRI_ZEROCONF=zeroconf}, {@code AKRI_ZEROCONF_DEVICE_KIND} (e.g.
 * {@code _http._tcp}), {@code _NAME} (instance name), {@code _HOST} (SRV target without trailing
 * dot, when known), {@code _ADDR} (first address, IPv4 preferred, when known), {@code _PORT}.
 *
 * <p>TXT attributes become {@code AKRI_ZEROCONF_DEVICE_<KEY>} where KEY is the TXT key upper-cased
 * with every character outside {@code [A-Z0-9_]} replaced by {@code _}; a TXT key can therefore
 * never produce a name outside that prefix (no {@code PATH}, {@code LD_PRELOAD}). Limits:
 *
 * <ul>
 *   <li>only the first {@value #MAX_TXT_ENTRIES} TXT attributes (wire order) are considered;
 *   <li>keys longer than {@value #MAX_KEY_LENGTH} characters are dropped;
 *   <li>a value longer than {@value #MAX_VALUE_BYTES} UTF-8 bytes is <em>dropped</em>, not
 *       truncated (a cut URL or token silently means something else; DNS-SD strings cannot be
 *       longer anyway, RFC 6763 §6.1);
 *   <li>a value holding a control character (NUL, CR, LF, DEL, C1; TAB is allowed) is dropped;
 *   <li>a TXT key that normalises to a fixed property's name, or to the name of an earlier TXT key,
 *       is dropped (fixed properties and the first occurrence win);
 *   <li>a boolean attribute (no {@code =}) gives an empty value.
 * </ul>
 *
 * Control characters in the instance and host names are replaced by {@code ?}. Pure functions.
 */
public final class ZeroconfProperties {

  public static final String PROTOCOL = "AKRI_ZEROCONF";
  public static final String PREFIX = "AKRI_ZEROCONF_DEVICE_";
  public static final String KIND = PREFIX + "KIND";
  public static final String NAME = PREFIX + "NAME";
  public static final String HOST = PREFIX + "HOST";
  public static final String ADDR = PREFIX + "ADDR";
  public static final String PORT = PREFIX + "PORT";

  public static final int MAX_TXT_ENTRIES = 64;
  public static final int MAX_KEY_LENGTH = 64;
  public static final int MAX_VALUE_BYTES = 255;

  private ZeroconfProperties() {}

  /** The properties of one service, in a stable order (fixed ones first, then TXT wire order). */
  public static Map<String, String> of(ServiceRecord service) {
    Map<String, String> props = new LinkedHashMap<>();
    props.put(PROTOCOL, "zeroconf");
    props.put(KIND, service.type().kind());
    props.put(NAME, printable(service.name()));
    service.host().ifPresent(h -> props.put(HOST, printable(h)));
    if (!service.addresses().isEmpty()) {
      props.put(ADDR, service.addresses().get(0));
    }
    props.put(PORT, Integer.toString(service.port()));
    int considered = 0;
    for (TxtEntry entry : service.txt()) {
      if (++considered > MAX_TXT_ENTRIES) {
        break;
      }
      Optional<String> env = envName(entry.key());
      String value = entry.value().orElse("");
      if (env.isPresent() && acceptableValue(value) && !props.containsKey(env.get())) {
        props.put(env.get(), value);
      }
    }
    return props;
  }

  /**
   * The env name for a TXT key: {@code AKRI_ZEROCONF_DEVICE_} + the key upper-cased, every
   * character (code point) outside {@code [A-Z0-9_]} replaced by {@code _}. Empty for an empty or
   * over-long key.
   */
  public static Optional<String> envName(String txtKey) {
    if (txtKey.isEmpty() || txtKey.codePointCount(0, txtKey.length()) > MAX_KEY_LENGTH) {
      return Optional.empty();
    }
    StringBuilder name = new StringBuilder(PREFIX);
    txtKey
        .toUpperCase(Locale.ROOT)
        .codePoints()
        .forEach(
            c ->
                name.append(
                    (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ? (char) c : '_'));
    return Optional.of(name.toString());
  }

  /** Whether a TXT value may become a property value: bounded and free of control characters. */
  public static boolean acceptableValue(String value) {
    if (value.getBytes(StandardCharsets.UTF_8).length > MAX_VALUE_BYTES) {
      return false;
    }
    return value.chars().noneMatch(ZeroconfProperties::isControl);
  }

  private static String printable(String s) {
    StringBuilder out = new StringBuilder(s.length());
    s.codePoints().forEach(c -> out.append(isControl(c) ? "?" : Character.toString(c)));
    return out.toString();
  }

  private static boolean isControl(int c) {
    return c != '\t' && Character.isISOControl(c);
  }
}
