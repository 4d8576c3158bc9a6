package io.jakri.handler.onvif;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class WsDiscoveryTest {

  private static final String ID = "uuid:11111111-2222-3333-4444-555555555555";

  /** A ProbeMatches as gSOAP-based cameras send it (the shape of Akri's test message). */
  private static String probeMatches(
      String relatesTo, String address, String xaddrs, String scopes) {
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
        + "<SOAP-ENV:Envelope xmlns:SOAP-ENV=\"http://www.w3.org/2003/05/soap-envelope\""
        + " xmlns:wsa=\"http://schemas.xmlsoap.org/ws/2004/08/addressing\""
        + " xmlns:d=\"http://schemas.xmlsoap.org/ws/2005/04/discovery\""
        + " xmlns:dn=\"http://www.onvif.org/ver10/network/wsdl\"><SOAP-ENV:Header>"
        + "<wsa:MessageID>uuid:x</wsa:MessageID>"
        + (relatesTo == null ? "" : "<wsa:RelatesTo>" + relatesTo + "</wsa:RelatesTo>")
        + "</SOAP-ENV:Header><SOAP-ENV:Body><d:ProbeMatches><d:ProbeMatch>"
        + "<wsa:EndpointReference><wsa:Address>"
        + address
        + "</wsa:Address></wsa:EndpointReference>"
        + "<d:Types>dn:NetworkVideoTransmitter</d:Types><d:Scopes>"
        + scopes
        + "</d:Scopes>"
        + "<d:XAddrs>"
        + xaddrs
        + "</d:XAddrs><d:MetadataVersion>1</d:MetadataVersion>"
        + "</d:ProbeMatch></d:ProbeMatches></SOAP-ENV:Body></SOAP-ENV:Envelope>";
  }

  private static List<ProbeMatch> parse(String xml) throws Xml.Rejected {
    byte[] b = xml.getBytes(StandardCharsets.UTF_8);
    return WsDiscovery.probeMatches(b, b.length, ID);
  }

  @Test
  void eachAddressIsACandidateAndTheUuidIsAkris() throws Exception {
    List<ProbeMatch> matches =
        parse(
            probeMatches(
                ID,
                "urn:uuid:ABCDEF01-2345",
                " http://10.0.0.1:80/onvif/device_service\n  https://10.0.0.2/svc ",
                "onvif://www.onvif.org/name/NVT onvif://www.onvif.org/hardware/x"));
    assertThat(matches)
        .containsExactly(
            new ProbeMatch(
                "abcdef01-2345",
                List.of("http://10.0.0.1:80/onvif/device_service", "https://10.0.0.2/svc"),
                List.of("onvif://www.onvif.org/name/NVT onvif://www.onvif.org/hardware/x"),
                "urn:uuid:ABCDEF01-2345"));
  }

  @Test
  void deviceIdStripsUrnThenUuidAndLowerCases() {
    // akri discovery_impl.rs test_get_onvif_device_id
    String[][] cases = {
      {"a", "a"},
      {"urn:b", "b"},
      {"uuid:c", "c"},
      {"urn:uuid:d", "d"},
      {"uuid:urn:e", "urn:e"},
      {"urn:x:uuid:F", "x:uuid:f"},
      {"x:uuid:G", "x:uuid:g"}
    };
    for (String[] c : cases) {
      assertThat(ProbeMatch.deviceId(c[0])).as(c[0]).isEqualTo(c[1]);
    }
  }

  @Test
  void answersToOtherProbesAreIgnoredAndMissingRelatesToIsAccepted() throws Exception {
    String xaddr = "http://10.0.0.1/onvif/device_service";
    assertThat(parse(probeMatches("uuid:other", "urn:uuid:a", xaddr, ""))).isEmpty();
    assertThat(parse(probeMatches(null, "urn:uuid:a", xaddr, ""))).hasSize(1);
  }

  @Test
  void unusableAddressesAndIdsAreDropped() throws Exception {
    List<ProbeMatch> matches =
        parse(
            probeMatches(
                ID,
                "urn:uuid:a",
                "ftp://10.0.0.1/x file:///etc/passwd http:/nohost javascript:alert(1) http://"
                    + "h".repeat(600)
                    + "/ http://10.0.0.9/ok",
                ""));
    assertThat(matches)
        .singleElement()
        .extracting(ProbeMatch::xaddrs)
        .isEqualTo(List.of("http://10.0.0.9/ok"));
    assertThat(parse(probeMatches(ID, "", "http://10.0.0.1/", ""))).isEmpty();
    assertThat(parse(probeMatches(ID, "urn:uuid:" + "x".repeat(200), "http://10.0.0.1/", "")))
        .isEmpty();
    assertThat(parse(probeMatches(ID, "urn:uuid:a b", "http://10.0.0.1/", ""))).isEmpty();
  }

  @Test
  void matchesPerMessageAndAddressesPerMatchAreBounded() throws Exception {
    StringBuilder addrs = new StringBuilder();
    for (int i = 0; i < 100; i++) {
      addrs.append("http://10.0.0.1/").append(i).append(' ');
    }
    String one = probeMatches(ID, "urn:uuid:a", addrs.toString(), "");
    assertThat(parse(one).get(0).xaddrs()).hasSize(WsDiscovery.MAX_XADDRS);
    String small = probeMatches(ID, "urn:uuid:a", "http://10.0.0.1/", "");
    String match =
        small.substring(small.indexOf("<d:ProbeMatch>"), small.indexOf("</d:ProbeMatches>"));
    String many = small.replace(match, match.repeat(100));
    assertThat(parse(many)).hasSize(WsDiscovery.MAX_MATCHES_PER_MESSAGE);
  }

  @Test
  void hostileDatagramsAreRejected() {
    assertThatThrownBy(
            () ->
                parse(
                    "<!DOCTYPE e [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
                        + probeMatches(ID, "urn:uuid:&x;", "http://10.0.0.1/", "").substring(38)))
        .isInstanceOf(Xml.Rejected.class);
    assertThatThrownBy(() -> parse("<html/>")).hasMessage("not a SOAP envelope but <html>");
    byte[] huge = new byte[70_000];
    assertThatThrownBy(() -> WsDiscovery.probeMatches(huge, huge.length, ID))
        .hasMessageContaining("larger than");
  }

  @Test
  void resolveMatchesAnsweringOurResolveAreReadLikeProbeMatches() throws Exception {
    String resolveMatches =
        probeMatches("uuid:resolve-1", "urn:uuid:B", "http://10.0.0.2:5357/b", "")
            .replace("ProbeMatch", "ResolveMatch");
    byte[] b = resolveMatches.getBytes(StandardCharsets.UTF_8);
    assertThat(WsDiscovery.probeMatches(b, b.length, java.util.Set.of(ID, "uuid:resolve-1")))
        .containsExactly(
            new ProbeMatch("b", List.of("http://10.0.0.2:5357/b"), List.of(""), "urn:uuid:B"));
    assertThat(WsDiscovery.resolve("uuid:r", "urn:uuid:B"))
        .contains("<d:Resolve><w:EndpointReference><w:Address>urn:uuid:B</w:Address>")
        .contains("discovery/Resolve</w:Action>");
  }

  @Test
  void probeDeclaresItsTypePrefix() throws Exception {
    String probe = WsDiscovery.probe("uuid:m", ProbeType.NETWORK_VIDEO_TRANSMITTER);
    assertThat(probe)
        .contains("xmlns:netwsdl=\"http://www.onvif.org/ver10/network/wsdl\"")
        .contains("<d:Types>netwsdl:NetworkVideoTransmitter</d:Types>")
        .contains("<w:MessageID>uuid:m</w:MessageID>")
        .contains("<w:Action>http://schemas.xmlsoap.org/ws/2005/04/discovery/Probe</w:Action>");
    byte[] b = probe.getBytes(StandardCharsets.UTF_8);
    assertThat(Xml.parse(b, b.length, 65_507).getDocumentElement().getLocalName())
        .isEqualTo("Envelope");
  }
}
