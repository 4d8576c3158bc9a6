package io.jakri.handler.zeroconf;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ServiceTypeTest {

  @Test
  void parsesTcpAndUdpTypesAndPrintsThemBack() {
    assertThat(ServiceType.parse("_http._tcp")).contains(new ServiceType("http", "tcp"));
    assertThat(ServiceType.parse(" _my-printer._UDP "))
        .contains(new ServiceType("my-printer", "udp"));
    assertThat(ServiceType.parse("_http._tcp").orElseThrow().kind()).isEqualTo("_http._tcp");
  }

  @Test
  void qualifiesWithDomainAndTrailingDotForJmdns() {
    assertThat(new ServiceType("rust", "tcp").qualified("local")).isEqualTo("_rust._tcp.local.");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "http",
        "_http",
        "http._tcp",
        "_http.tcp",
        "_http._sctp",
        "_http._tcp.local",
        "_-http._tcp",
        "_http-._tcp",
        "_ht--tp._tcp",
        "_1234._tcp",
        "_abcdefghijklmnop._tcp",
        "_ht tp._tcp",
        "_http._tcp\nx"
      })
  void rejectsWhatIsNotAServiceType(String kind) {
    assertThat(ServiceType.parse(kind)).isEmpty();
  }

  @Test
  void acceptsFifteenCharacterNamesWithDigits() {
    assertThat(ServiceType.parse("_abcdefghijklmn1._tcp")).isPresent();
  }
}
