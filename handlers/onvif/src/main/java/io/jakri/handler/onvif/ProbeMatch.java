package io.jakri.handler.onvif;

import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * One {@code d:ProbeMatch} of a WS-Discovery ProbeMatches message, bounded and cleaned.
 *
 * @param uuid the endpoint's id as Akri forms it: {@code wsa:Address} without a leading {@code
 *     urn:} and then {@code uuid:}, lower-cased
 * @param xaddrs the device service addresses ({@code d:XAddrs}, whitespace-separated), each an
 *     http(s) URL; one device per address, as in Akri
 * @param scopes the text of each {@code d:Scopes} element (each a whitespace-separated list)
 * @param address the endpoint address exactly as sent (what a Resolve asks for)
 */
public record ProbeMatch(String uuid, List<String> xaddrs, List<String> scopes, String address) {

  public ProbeMatch {
    Objects.requireNonNull(uuid, "uuid");
    Objects.requireNonNull(address, "address");
    xaddrs = List.copyOf(xaddrs);
    scopes = List.copyOf(scopes);
  }

  /** A match as the tests write it: the address is {@code urn:uuid:<uuid>}. */
  public ProbeMatch(String uuid, List<String> xaddrs, List<String> scopes) {
    this(uuid, xaddrs, scopes, "urn:uuid:" + uuid);
  }

  /** Akri's {@code get_onvif_device_id}: strip {@code urn:}, then {@code uuid:}, lower-case. */
  public static String deviceId(String address) {
    String s = address.startsWith("urn:") ? address.substring(4) : address;
    s = s.startsWith("uuid:") ? s.substring(5) : s;
    return s.toLowerCase(Locale.ROOT);
  }
}
