package io.jakri.handler.onvif;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.w3c.dom.Document;
import org.w3c.dom.Element;

/**
 * WS-Discovery (April 2005, the version ONVIF uses) messages: the Probe we multicast and the
 * ProbeMatches we accept. Pure functions.
 *
 * <p>ProbeMatches are untrusted: they arrive from anyone on the network. Parsing goes through
 * {@link Xml} (no DTDs, bounded size and depth); a message answering another probe ({@code
 * wsa:RelatesTo} present and not our {@code MessageID}) is ignored; at most {@value
 * #MAX_MATCHES_PER_MESSAGE} matches per message, {@value #MAX_XADDRS} addresses and {@value
 * #MAX_SCOPES} scope elements per match are read; an address must be an absolute http or https URL
 * of at most {@value #MAX_URL_LENGTH} printable ASCII characters, a UUID at most {@value
 * #MAX_UUID_LENGTH} printable characters; what breaks these rules is dropped.
 */
public final class WsDiscovery {

  public static final String MULTICAST_GROUP = "239.255.255.250";
  public static final int PORT = 3702;
  static final String SOAP_ENV = "http://www.w3.org/2003/05/soap-envelope";
  static final String WSA = "http://schemas.xmlsoap.org/ws/2004/08/addressing";
  static final String WSD = "http://schemas.xmlsoap.org/ws/2005/04/discovery";

  /** Largest datagram read; a UDP payload cannot be larger. */
  public static final int MAX_DATAGRAM = 65_507;

  static final int MAX_MATCHES_PER_MESSAGE = 16;
  static final int MAX_XADDRS = 8;
  static final int MAX_SCOPES = 64;
  static final int MAX_URL_LENGTH = 512;
  static final int MAX_UUID_LENGTH = 128;

  private WsDiscovery() {}

  /** The Probe envelope for {@code type}, with {@code messageId} (e.g. {@code uuid:...}). */
  public static String probe(String messageId, ProbeType type) {
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
        + "<s:Envelope xmlns:s=\""
        + SOAP_ENV
        + "\" xmlns:w=\""
        + WSA
        + "\" xmlns:d=\""
        + WSD
        + "\" xmlns:"
        + type.prefix()
        + "=\""
        + Xml.escape(type.namespace())
        + "\">"
        + "<s:Header>"
        + "<w:MessageID>"
        + Xml.escape(messageId)
        + "</w:MessageID>"
        + "<w:To>urn:schemas-xmlsoap-org:ws:2005:04:discovery</w:To>"
        + "<w:Action>http://schemas.xmlsoap.org/ws/2005/04/discovery/Probe</w:Action>"
        + "</s:Header>"
        + "<s:Body><d:Probe><d:Types>"
        + type.qualified()
        + "</d:Types></d:Probe></s:Body>"
        + "</s:Envelope>";
  }

  /**
   * A Resolve for an endpoint whose ProbeMatch carried no {@code XAddrs} (WS-Discovery §6: the
   * client resolves it; Akri does not, so such devices were invisible to it).
   */
  public static String resolve(String messageId, String endpointAddress) {
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
        + "<s:Envelope xmlns:s=\""
        + SOAP_ENV
        + "\" xmlns:w=\""
        + WSA
        + "\" xmlns:d=\""
        + WSD
        + "\">"
        + "<s:Header>"
        + "<w:MessageID>"
        + Xml.escape(messageId)
        + "</w:MessageID>"
        + "<w:To>urn:schemas-xmlsoap-org:ws:2005:04:discovery</w:To>"
        + "<w:Action>http://schemas.xmlsoap.org/ws/2005/04/discovery/Resolve</w:Action>"
        + "</s:Header>"
        + "<s:Body><d:Resolve><w:EndpointReference><w:Address>"
        + Xml.escape(endpointAddress)
        + "</w:Address></w:EndpointReference></d:Resolve></s:Body></s:Envelope>";
  }

  /** As {@link #probeMatches(byte[], int, java.util.Set)} for one message id. */
  public static List<ProbeMatch> probeMatches(byte[] data, int length, String messageId)
      throws Xml.Rejected {
    return probeMatches(data, length, java.util.Set.of(messageId));
  }

  /**
   * The matches in one received datagram: {@code d:ProbeMatch} or {@code d:ResolveMatch} elements
   * answering one of our messages {@code messageIds}.
   *
   * @throws Xml.Rejected when the datagram is not acceptable XML
   */
  public static List<ProbeMatch> probeMatches(
      byte[] data, int length, java.util.Set<String> messageIds) throws Xml.Rejected {
    Document doc = Xml.parse(data, length, MAX_DATAGRAM);
    Element envelope = doc.getDocumentElement();
    if (!"Envelope".equals(envelope.getLocalName())) {
      throw new Xml.Rejected("not a SOAP envelope but <" + envelope.getLocalName() + ">");
    }
    Optional<Element> relatesTo = Xml.path(envelope, "Header", "RelatesTo");
    if (relatesTo.isPresent() && !messageIds.contains(Xml.text(relatesTo.get()))) {
      return List.of();
    }
    Optional<Element> matches = Xml.path(envelope, "Body", "ProbeMatches");
    String matchName = "ProbeMatch";
    if (matches.isEmpty()) {
      matches = Xml.path(envelope, "Body", "ResolveMatches");
      matchName = "ResolveMatch";
    }
    if (matches.isEmpty()) {
      return List.of();
    }
    List<ProbeMatch> result = new ArrayList<>();
    for (Element match : Xml.children(matches.get(), matchName)) {
      if (result.size() >= MAX_MATCHES_PER_MESSAGE) {
        break;
      }
      Optional<String> address =
          Xml.path(match, "EndpointReference", "Address")
              .map(Xml::text)
              .filter(a -> acceptableUuid(ProbeMatch.deviceId(a)));
      if (address.isEmpty()) {
        continue;
      }
      List<String> xaddrs = new ArrayList<>();
      for (Element x : Xml.children(match, "XAddrs")) {
        for (String addr : Xml.text(x).split("\\s+")) {
          if (xaddrs.size() < MAX_XADDRS && acceptableUrl(addr) && !xaddrs.contains(addr)) {
            xaddrs.add(addr);
          }
        }
      }
      List<String> scopes = new ArrayList<>();
      for (Element s : Xml.children(match, "Scopes")) {
        if (scopes.size() < MAX_SCOPES) {
          scopes.add(Xml.text(s));
        }
      }
      result.add(new ProbeMatch(ProbeMatch.deviceId(address.get()), xaddrs, scopes, address.get()));
    }
    return result;
  }

  static boolean acceptableUuid(String uuid) {
    return !uuid.isEmpty()
        && uuid.length() <= MAX_UUID_LENGTH
        && uuid.chars().allMatch(c -> c > 0x20 && c < 0x7f);
  }

  /** An absolute http(s) URL with a host, printable ASCII, bounded. */
  static boolean acceptableUrl(String url) {
    if (url.isEmpty()
        || url.length() > MAX_URL_LENGTH
        || !url.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
      return false;
    }
    try {
      URI uri = new URI(url);
      String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
      return (scheme.equals("http") || scheme.equals("https")) && uri.getHost() != null;
    } catch (URISyntaxException e) {
      return false;
    }
  }
}
