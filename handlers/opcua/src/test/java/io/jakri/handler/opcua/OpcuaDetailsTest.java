package io.jakri.handler.opcua;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Parsed;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class OpcuaDetailsTest {

  private static List<String> urls(OpcuaDetails details) {
    return details.discoveryUrls().stream().map(OpcTcpUrl::text).toList();
  }

  @Test
  void akrisDetailedExampleParsesUnchanged() throws Exception {
    OpcuaDetails details =
        OpcuaDetails.parse(
                """
                opcuaDiscoveryMethod:
                  standard:
                    discoveryUrls:
                    - opc.tcp://127.0.0.1:4855/
                applicationNames:
                  action: Include
                  items:
                  - "Some application name"
                """)
            .orThrow();

    assertThat(urls(details)).containsExactly("opc.tcp://127.0.0.1:4855/");
    assertThat(details.applicationNames())
        .isEqualTo(
            new ApplicationNameFilter(
                ApplicationNameFilter.Action.INCLUDE, List.of("Some application name")));
    assertThat(details.pollInterval()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void emptyStandardMethodDefaultsToTheLocalDiscoveryServerAndNoFilter() throws Exception {
    for (String yaml :
        List.of(
            "opcuaDiscoveryMethod:\n  standard: {}\n", "opcuaDiscoveryMethod:\n  standard:\n")) {
      Parsed<OpcuaDetails> parsed = OpcuaDetails.parse(yaml);

      assertThat(urls(parsed.orThrow())).containsExactly("opc.tcp://localhost:4840/");
      assertThat(parsed.orThrow().applicationNames()).isEqualTo(ApplicationNameFilter.NONE);
      assertThat(parsed.warnings()).isEmpty();
    }
  }

  @Test
  void akrisHelmChartDetailsParseUnchanged() throws Exception {
    Parsed<OpcuaDetails> parsed =
        OpcuaDetails.parse(
            """
            opcuaDiscoveryMethod:\s
              standard:
                discoveryUrls:\s
                - "opc.tcp://localhost:4840/"
            applicationNames:
              action: Exclude
              items: []
            """);

    assertThat(parsed.errors()).isEmpty();
    assertThat(parsed.warnings()).isEmpty();
    assertThat(parsed.orThrow().applicationNames().admits("anything")).isTrue();
  }

  @Test
  void includeWithNoItemsIsValidButWarnsThatItAdmitsNothing() throws Exception {
    Parsed<OpcuaDetails> parsed =
        OpcuaDetails.parse(
            "opcuaDiscoveryMethod: {standard: {}}\napplicationNames: {action: Include, items: []}");

    assertThat(parsed.orThrow().applicationNames().admits("")).isFalse();
    assertThat(parsed.warnings())
        .containsExactly(
            "applicationNames: action Include with no items admits no server (as in Akri); use"
                + " action: Exclude to admit every server");
  }

  @Test
  void actionDefaultsToIncludeAsInAkri() throws Exception {
    OpcuaDetails details =
        OpcuaDetails.parse("opcuaDiscoveryMethod: {standard: {}}\napplicationNames: {items: [a]}")
            .orThrow();

    assertThat(details.applicationNames().action()).isEqualTo(ApplicationNameFilter.Action.INCLUDE);
  }

  @Test
  void pollIntervalIsReadAndBounded() throws Exception {
    assertThat(
            OpcuaDetails.parse("opcuaDiscoveryMethod: {standard: {}}\npollIntervalSeconds: 2")
                .orThrow()
                .pollInterval())
        .isEqualTo(Duration.ofSeconds(2));
    assertThat(
            OpcuaDetails.parse("opcuaDiscoveryMethod: {standard: {}}\npollIntervalSeconds: 0")
                .errors())
        .containsExactly("pollIntervalSeconds must be between 1 and 3600 but is 0");
    assertThat(
            OpcuaDetails.parse("opcuaDiscoveryMethod: {standard: {}}\npollIntervalSeconds: soon")
                .errors())
        .containsExactly("pollIntervalSeconds must be an integer but is the string \"soon\"");
  }

  @Test
  void missingMethodIsAnError() {
    assertThat(OpcuaDetails.parse("").errors())
        .singleElement()
        .asString()
        .startsWith("opcuaDiscoveryMethod is required");
  }

  @Test
  void unknownMethodIsAnErrorNamingIt() {
    assertThat(OpcuaDetails.parse("opcuaDiscoveryMethod: {mdns: {}}").errors())
        .containsExactly(
            "opcuaDiscoveryMethod must name exactly one method, standard (the only one Akri"
                + " has), but names [mdns]");
  }

  @Test
  void everyBadUrlIsReportedWithItsIndexAndReason() {
    Parsed<OpcuaDetails> parsed =
        OpcuaDetails.parse(
            """
            opcuaDiscoveryMethod:
              standard:
                discoveryUrls:
                - http://plc:4840/
                - opc.tcp://plc:70000/
                - opc.tcp://plc:0/
                - opc.tcp://:4840/
                - "opc.tcp://plc 1:4840/"
                - opc.tcp://plc:48x/
                - opc.tcp://good:4840/
            """);

    String field = "opcuaDiscoveryMethod.standard.discoveryUrls";
    assertThat(parsed.details()).isEmpty();
    assertThat(parsed.errors())
        .containsExactly(
            field
                + "[0] must be an opc.tcp://host:port/ URL, but \"http://plc:4840/\" is not usable:"
                + " it does not start with opc.tcp://",
            field
                + "[1] must be an opc.tcp://host:port/ URL, but \"opc.tcp://plc:70000/\" is not"
                + " usable: its port must be between 1 and 65535 but is 70000",
            field
                + "[2] must be an opc.tcp://host:port/ URL, but \"opc.tcp://plc:0/\" is not"
                + " usable: its port must be between 1 and 65535 but is 0",
            field
                + "[3] must be an opc.tcp://host:port/ URL, but \"opc.tcp://:4840/\" is not"
                + " usable: it names no host",
            field
                + "[4] must be an opc.tcp://host:port/ URL, but \"opc.tcp://plc 1:4840/\" is not"
                + " usable: it holds spaces, control or non-ASCII characters",
            field
                + "[5] must be an opc.tcp://host:port/ URL, but \"opc.tcp://plc:48x/\" is not"
                + " usable: its port \"48x\" is not a number");
  }

  @Test
  void aThousandUrlsAreRefusedWithOneClearError() {
    String list =
        IntStream.range(0, 1000)
            .mapToObj(i -> "    - opc.tcp://10.0." + (i / 250) + "." + (i % 250) + ":4840/")
            .collect(Collectors.joining("\n"));
    Parsed<OpcuaDetails> parsed =
        OpcuaDetails.parse("opcuaDiscoveryMethod:\n  standard:\n    discoveryUrls:\n" + list);

    assertThat(parsed.errors())
        .containsExactly(
            "opcuaDiscoveryMethod.standard.discoveryUrls has 1000 entries; at most 256 are allowed"
                + " (split them over several Configurations or use a discovery server)");
  }

  @Test
  void missingPortIsAcceptedWithOpcUasDefaultAndRepeatsAreDropped() throws Exception {
    Parsed<OpcuaDetails> parsed =
        OpcuaDetails.parse(
            "opcuaDiscoveryMethod: {standard: {discoveryUrls: [opc.tcp://plc/UA, opc.tcp://plc/UA,"
                + " \"opc.tcp://[::1]:4841/\"]}}");

    OpcuaDetails details = parsed.orThrow();
    assertThat(urls(details)).containsExactly("opc.tcp://plc/UA", "opc.tcp://[::1]:4841/");
    assertThat(details.discoveryUrls().get(0).portOrDefault()).isEqualTo(4840);
    assertThat(details.discoveryUrls().get(1).host()).isEqualTo("::1");
    assertThat(parsed.warnings())
        .containsExactly(
            "opcuaDiscoveryMethod.standard.discoveryUrls[0] names no port: OPC UA's 4840 is used",
            "opcuaDiscoveryMethod.standard.discoveryUrls[1] names no port: OPC UA's 4840 is used",
            "opcuaDiscoveryMethod.standard.discoveryUrls[1] repeats opc.tcp://plc/UA and is"
                + " ignored");
  }

  @Test
  void badActionAndUnknownKeys() {
    Parsed<OpcuaDetails> parsed =
        OpcuaDetails.parse(
            """
            opcuaDiscoveryMethod:
              standard: {discoveryUrl: opc.tcp://x:1/}
            applicationNames: {action: include, items: [a]}
            pollIntervalSecs: 5
            """);

    assertThat(parsed.errors())
        .containsExactly("applicationNames.action must be Include or Exclude but is \"include\"");
    assertThat(parsed.warnings())
        .containsExactly(
            "opcuaDiscoveryMethod.standard.discoveryUrl is not an opcua setting and is ignored",
            "pollIntervalSecs is not an opcua setting and is ignored");
  }

  @Test
  void hostileYamlIsOneErrorNotAnException() {
    Parsed<OpcuaDetails> parsed = OpcuaDetails.parse("a: &a [*a, *a]\n: : :");

    assertThat(parsed.details()).isEmpty();
    assertThat(parsed.errors()).singleElement().asString().startsWith("discoveryDetails: ");
  }

  @Test
  void orThrowJoinsEveryError() {
    assertThatThrownBy(
            () ->
                OpcuaDetails.parse(
                        "opcuaDiscoveryMethod: {standard: {discoveryUrls: [x]}}\n"
                            + "pollIntervalSeconds: -1")
                    .orThrow())
        .isInstanceOf(InvalidDetailsException.class)
        .hasMessageContaining("discoveryUrls[0]")
        .hasMessageContaining("; pollIntervalSeconds must be between 1 and 3600 but is -1");
  }
}
