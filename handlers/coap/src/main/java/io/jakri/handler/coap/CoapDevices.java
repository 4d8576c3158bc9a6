package io.jakri.handler.coap;

import io.jakri.handler.DiscoveredDevice;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * An endpoint's device: id {@code host:port}, shared (a network endpoint is seen from every node
 * that can reach it), and fixed property names, so nothing from the network chooses an env name.
 *
 * <ul>
 *   <li>{@code COAP_ENDPOINT} {@code coap://10.0.0.5:5683}; {@code COAP_HOST}, {@code COAP_PORT};
 *   <li>{@code COAP_LINKS} the kept links, compact: {@code path;rt=a b;if=c} joined by {@code ,}
 *       ({@code ;rt=}/{@code ;if=} only when present; {@code % , ; =} and space in a path or value
 *       percent-encoded), at most {@value #MAX_LINKS_CHARS} characters of whole links;
 *   <li>{@code COAP_LINK_COUNT} how many links were kept (also those not in {@code COAP_LINKS});
 *   <li>{@code COAP_RESOURCE_TYPES} every {@code rt} of the kept links, sorted, space-separated.
 * </ul>
 */
final class CoapDevices {

  static final String ENDPOINT = "COAP_ENDPOINT";
  static final String HOST = "COAP_HOST";
  static final String PORT = "COAP_PORT";
  static final String LINKS = "COAP_LINKS";
  static final String LINK_COUNT = "COAP_LINK_COUNT";
  static final String RESOURCE_TYPES = "COAP_RESOURCE_TYPES";
  static final int MAX_LINKS_CHARS = 4096;

  private CoapDevices() {}

  static DiscoveredDevice device(Endpoint endpoint, List<Link> kept) {
    Map<String, String> p = new LinkedHashMap<>();
    p.put(ENDPOINT, endpoint.uri());
    p.put(HOST, endpoint.host());
    p.put(PORT, Integer.toString(endpoint.port()));
    p.put(LINKS, compact(kept));
    p.put(LINK_COUNT, Integer.toString(kept.size()));
    TreeSet<String> rt = new TreeSet<>();
    kept.forEach(l -> rt.addAll(l.resourceTypes()));
    String types = String.join(" ", rt.stream().map(CoapDevices::encode).toList());
    p.put(RESOURCE_TYPES, types.length() > MAX_LINKS_CHARS ? "" : types);
    return DiscoveredDevice.of(endpoint.id(), p, true);
  }

  static String compact(List<Link> links) {
    StringBuilder b = new StringBuilder();
    for (Link link : links) {
      StringBuilder one = new StringBuilder(encode(link.target()));
      if (!link.resourceTypes().isEmpty()) {
        one.append(";rt=")
            .append(
                String.join(" ", link.resourceTypes().stream().map(CoapDevices::encode).toList()));
      }
      if (!link.interfaces().isEmpty()) {
        one.append(";if=")
            .append(String.join(" ", link.interfaces().stream().map(CoapDevices::encode).toList()));
      }
      int extra = b.isEmpty() ? 0 : 1;
      if (b.length() + extra + one.length() > MAX_LINKS_CHARS) {
        break;
      }
      if (extra > 0) {
        b.append(',');
      }
      b.append(one);
    }
    return b.toString();
  }

  /** Percent-encodes what would break the compact form, and control characters. */
  static String encode(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (char c : s.toCharArray()) {
      if (c == '%' || c == ',' || c == ';' || c == '=' || c == ' ' || c < 0x20 || c == 0x7f) {
        b.append('%').append(String.format("%02X", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }
}
