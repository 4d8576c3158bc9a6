package io.jakri.handler.zeroconf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Parsed;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ZeroconfDetailsTest {

  @Test
  void parsesEverySetting() throws Exception {
    ZeroconfDetails details =
        ZeroconfDetails.parse(
                """
                kind: _http._tcp
                name: printer
                domain: local.
                port: 8080
                txtRecords: {model: x1, debug: ""}
                interfaces: [eth0, 10.0.0.2, "fe80::1%eth0"]
                """)
            .orThrow();

    assertThat(details)
        .isEqualTo(
            new ZeroconfDetails(
                new ServiceType("http", "tcp"),
                Optional.of("printer"),
                "local",
                Optional.of(8080),
                Map.of("model", "x1", "debug", ""),
                List.of("eth0", "10.0.0.2", "fe80::1%eth0")));
  }

  @Test
  void onlyKindIsRequiredAndDomainDefaultsToLocal() throws Exception {
    ZeroconfDetails details = ZeroconfDetails.parse("kind: _rust._tcp").orThrow();

    assertThat(details.domain()).isEqualTo("local");
    assertThat(details.name()).isEmpty();
    assertThat(details.port()).isEmpty();
    assertThat(details.txtRecords()).isEmpty();
    assertThat(details.interfaces()).isEmpty();
  }

  @Test
  void missingKindIsAnError() {
    Parsed<ZeroconfDetails> parsed = ZeroconfDetails.parse("");

    assertThat(parsed.details()).isEmpty();
    assertThat(parsed.errors()).singleElement().asString().startsWith("kind is required");
  }

  @Test
  void kindThatIsNotAServiceTypeIsAnErrorNamingTheField() {
    Parsed<ZeroconfDetails> parsed = ZeroconfDetails.parse("kind: http");

    assertThat(parsed.errors())
        .singleElement()
        .asString()
        .startsWith("kind must be a DNS-SD service type")
        .contains("\"http\"");
  }

  @Test
  void collectsEveryErrorAtOnce() {
    Parsed<ZeroconfDetails> parsed =
        ZeroconfDetails.parse(
            """
            kind: _x
            port: 70000
            domain: "bad..domain"
            name: ""
            txtRecords: {"a=b": c}
            interfaces: ["not an interface!"]
            """);

    assertThat(parsed.details()).isEmpty();
    assertThat(parsed.errors())
        .hasSize(6)
        .anySatisfy(e -> assertThat(e).startsWith("kind "))
        .anySatisfy(e -> assertThat(e).startsWith("port must be between 1 and 65535"))
        .anySatisfy(e -> assertThat(e).startsWith("domain must be"))
        .anySatisfy(e -> assertThat(e).startsWith("name must not be empty"))
        .anySatisfy(e -> assertThat(e).startsWith("txtRecords.a=b"))
        .anySatisfy(e -> assertThat(e).startsWith("interfaces[0]"));
  }

  @Test
  void wrongTypesAreErrorsNamingTheField() {
    Parsed<ZeroconfDetails> parsed =
        ZeroconfDetails.parse("kind: _a._tcp\nport: eighty\ntxtRecords: [a]\ninterfaces: eth0");

    assertThat(parsed.errors())
        .containsExactlyInAnyOrder(
            "port must be an integer but is the string \"eighty\"",
            "txtRecords must be a mapping but is a list",
            "interfaces must be a list but is the string \"eth0\"");
  }

  @Test
  void txtKeysThatOnlyDifferInCaseAreAnError() {
    assertThat(ZeroconfDetails.parse("kind: _a._tcp\ntxtRecords: {Model: a, model: a}").errors())
        .singleElement()
        .asString()
        .contains("case-insensitively");
  }

  @Test
  void otherDomainThanLocalAndUnknownKeysAreWarnings() {
    Parsed<ZeroconfDetails> parsed =
        ZeroconfDetails.parse("kind: _a._tcp\ndomain: Example.COM\nfilter: x");

    assertThat(parsed.errors()).isEmpty();
    assertThat(parsed.details().orElseThrow().domain()).isEqualTo("example.com");
    assertThat(parsed.warnings())
        .containsExactly(
            "domain example.com is not local: mDNS only answers for .local, so probably nothing"
                + " will be found",
            "filter is not a zeroconf setting and is ignored");
  }

  @Test
  void invalidYamlIsAnError() {
    assertThat(ZeroconfDetails.parse("kind: [unclosed").errors())
        .singleElement()
        .asString()
        .startsWith("discoveryDetails: invalid YAML");
  }

  @Test
  void orThrowListsAllErrors() {
    assertThatThrownBy(() -> ZeroconfDetails.parse("kind: x\nport: 0").orThrow())
        .isInstanceOf(InvalidDetailsException.class)
        .hasMessageContaining("kind must be")
        .hasMessageContaining("; port must be between 1 and 65535 but is 0");
  }

  @Test
  void tellsAddressLiteralsFromInterfaceNames() {
    assertThat(ZeroconfDetails.isAddressLiteral("10.1.2.3")).isTrue();
    assertThat(ZeroconfDetails.isAddressLiteral("fe80::1")).isTrue();
    assertThat(ZeroconfDetails.isAddressLiteral("fe80::1%eth0")).isTrue();
    assertThat(ZeroconfDetails.isAddressLiteral("eth0")).isFalse();
    assertThat(ZeroconfDetails.isAddressLiteral("eth0:1")).isFalse();
    assertThat(ZeroconfDetails.isAddressLiteral("10.1.2.300")).isFalse();
  }
}
