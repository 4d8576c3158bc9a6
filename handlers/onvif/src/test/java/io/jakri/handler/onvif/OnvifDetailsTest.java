package io.jakri.handler.onvif;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.Parsed;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class OnvifDetailsTest {

  @Test
  void emptyDetailsGiveAkrisDefaults() {
    Parsed<OnvifDetails> parsed = OnvifDetails.parse("");
    assertThat(parsed.errors()).isEmpty();
    assertThat(parsed.warnings()).isEmpty();
    OnvifDetails d = parsed.details().orElseThrow();
    assertThat(d).isEqualTo(OnvifDetails.defaults());
    assertThat(d.discoveryTimeout()).isEqualTo(Duration.ofSeconds(1));
    assertThat(d.discoveryInterval()).isEqualTo(Duration.ofSeconds(10));
    assertThat(d.probeType().qualified()).isEqualTo("netwsdl:NetworkVideoTransmitter");
  }

  @Test
  void akrisOwnSampleConfigurationParsesUnchanged() {
    // akri test/yaml/akri-onvif-video-configuration.yaml, details as written there
    String yaml =
        """
        ipAddresses:\s
          action: Exclude
          items:
          - 10.0.0.1
          - 10.0.0.2
        macAddresses:
          action: Exclude
          items: []
        scopes:
          action: Include
          items:
          - onvif://www.onvif.org/name/GreatONVIFCamera
          - onvif://www.onvif.org/name/AwesomeONVIFCamera
        discoveryTimeoutSeconds: 2
        """;
    Parsed<OnvifDetails> parsed = OnvifDetails.parse(yaml);
    assertThat(parsed.errors()).isEmpty();
    assertThat(parsed.warnings()).isEmpty();
    OnvifDetails d = parsed.details().orElseThrow();
    assertThat(d.ipAddresses())
        .contains(new FilterList(FilterList.Action.Exclude, List.of("10.0.0.1", "10.0.0.2")));
    assertThat(d.macAddresses()).contains(new FilterList(FilterList.Action.Exclude, List.of()));
    assertThat(d.scopes().orElseThrow().items()).hasSize(2);
    assertThat(d.uuids()).isEmpty();
    assertThat(d.discoveryTimeout()).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void timeoutOfZeroOrAnHourIsAClearError() {
    assertThat(OnvifDetails.parse("discoveryTimeoutSeconds: 0").errors())
        .containsExactly(
            "discoveryTimeoutSeconds must be between 1 and 60 (how long ProbeMatches are collected;"
                + " cameras answer within a second) but is 0");
    assertThat(OnvifDetails.parse("discoveryTimeoutSeconds: 3600").errors())
        .singleElement()
        .asString()
        .startsWith("discoveryTimeoutSeconds must be between 1 and 60")
        .endsWith("but is 3600");
    assertThat(OnvifDetails.parse("discoveryTimeoutSeconds: -1").errors()).hasSize(1);
    assertThat(OnvifDetails.parse("discoveryTimeoutSeconds: soon").errors())
        .containsExactly("discoveryTimeoutSeconds must be an integer but is the string \"soon\"");
    assertThat(OnvifDetails.parse("discoveryIntervalSeconds: 0").errors())
        .containsExactly("discoveryIntervalSeconds must be between 1 and 3600 but is 0");
  }

  @Test
  void invalidIpAndMacItemsNameTheirFieldAndEveryErrorIsReported() {
    Parsed<OnvifDetails> parsed =
        OnvifDetails.parse(
            """
            ipAddresses: {action: Include, items: [10.0.0.1, 10.0.0.300, camera.local, "fe80::1"]}
            macAddresses: {action: Exclude, items: ["00:12:41:5c:a1:a5", "00:12:41:5c:a1", zz]}
            """);
    assertThat(parsed.details()).isEmpty();
    assertThat(parsed.errors())
        .containsExactly(
            "ipAddresses.items[1] must be an IPv4 or IPv6 address such as 10.0.0.1 but is"
                + " \"10.0.0.300\"",
            "ipAddresses.items[2] must be an IPv4 or IPv6 address such as 10.0.0.1 but is"
                + " \"camera.local\"",
            "macAddresses.items[1] must be a MAC address such as 00:12:41:5c:a1:a5 but is"
                + " \"00:12:41:5c:a1\"",
            "macAddresses.items[2] must be a MAC address such as 00:12:41:5c:a1:a5 but is \"zz\"");
  }

  @Test
  void filterShapeErrorsNameTheField() {
    assertThat(OnvifDetails.parse("scopes: {action: include, items: []}").errors())
        .containsExactly("scopes.action must be Include or Exclude but is \"include\"");
    assertThat(OnvifDetails.parse("uuids: {action: Exclude}").errors())
        .containsExactly("uuids.items is required (a list, may be empty), as in Akri");
    assertThat(OnvifDetails.parse("uuids: [a, b]").errors())
        .containsExactly("uuids must be a mapping but is a list with action and items");
    assertThat(OnvifDetails.parse("scopes: {items: [\"a b\"]}").errors())
        .containsExactly(
            "scopes.items[0] must not contain whitespace (scopes are whitespace-separated) but is"
                + " \"a b\"");
  }

  @Test
  void includeWithNoItemsIsValidButWarnsThatItLetsNothingThrough() {
    Parsed<OnvifDetails> parsed = OnvifDetails.parse("uuids: {action: Include, items: []}");
    assertThat(parsed.errors()).isEmpty();
    assertThat(parsed.warnings())
        .containsExactly(
            "uuids: action Include with no items lets no camera through (as in Akri); use action"
                + " Exclude with no items for no filter");
    // The action defaults to Include, as in Akri.
    assertThat(OnvifDetails.parse("uuids: {items: [x]}").details().orElseThrow().uuids())
        .contains(new FilterList(FilterList.Action.Include, List.of("x")));
  }

  @Test
  void unknownKeysAreWarnings() {
    Parsed<OnvifDetails> parsed =
        OnvifDetails.parse("discoveryTimeoutSecond: 2\nscopes: {action: Exclude, items: [], x: 1}");
    assertThat(parsed.errors()).isEmpty();
    assertThat(parsed.warnings())
        .containsExactlyInAnyOrder(
            "scopes.x is not a filter setting and is ignored",
            "discoveryTimeoutSecond is not an onvif setting and is ignored");
  }

  @Test
  void probeTypeAndInterfacesAreChecked() {
    OnvifDetails d =
        OnvifDetails.parse(
                "probeType: {prefix: wsdp, namespace: http://schemas.xmlsoap.org/ws/2006/02/devprof,"
                    + " name: Device}\ninterfaces: [eth0, 10.1.2.3]")
            .details()
            .orElseThrow();
    assertThat(d.probeType())
        .isEqualTo(
            new ProbeType("wsdp", "http://schemas.xmlsoap.org/ws/2006/02/devprof", "Device"));
    assertThat(d.interfaces()).containsExactly("eth0", "10.1.2.3");
    assertThat(
            OnvifDetails.parse(
                    "probeType: {prefix: \"a b\", namespace: relative, name: \"<x>\"}\n"
                        + "interfaces: [\"eth0; rm\"]")
                .errors())
        .containsExactly(
            "probeType.prefix must be an XML namespace prefix such as dn but is \"a b\"",
            "probeType.name must be an XML local name such as NetworkVideoTransmitter but is"
                + " \"<x>\"",
            "probeType.namespace must be an absolute URI of at most 256 characters such as"
                + " http://www.onvif.org/ver10/network/wsdl but is \"relative\"",
            "interfaces[0] must be an interface name (e.g. eth0) or a local IPv4 address, but is"
                + " \"eth0; rm\"");
  }

  @Test
  void hostileYamlIsRejectedByTheSharedSafeParser() {
    assertThat(OnvifDetails.parse("a: &a [*a]").errors())
        .singleElement()
        .asString()
        .startsWith("discoveryDetails:");
    assertThat(OnvifDetails.parse("!!java.lang.Runtime {}").details()).isEqualTo(Optional.empty());
  }
}
