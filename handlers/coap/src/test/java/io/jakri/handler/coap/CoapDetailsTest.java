package io.jakri.handler.coap;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.Parsed;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class CoapDetailsTest {

  @Test
  void emptyDetailsAreMulticastWithDefaults() {
    CoapDetails d = CoapDetails.parse("").details().orElseThrow();
    assertThat(d.multicast()).isTrue();
    assertThat(d.ipv6()).isTrue();
    assertThat(d.port()).isEqualTo(5683);
    assertThat(d.hosts()).isEmpty();
    assertThat(d.discoveryInterval()).isEqualTo(Duration.ofSeconds(10));
    assertThat(d.responseTimeout()).isEqualTo(Duration.ofMillis(5500));
    assertThat(d.gracePeriod()).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void everySettingIsRead() throws Exception {
    Parsed<CoapDetails> p =
        CoapDetails.parse(
            """
            multicast: false
            ipv6: false
            port: 5700
            networkInterfaces: [eth0, 10.0.0.2]
            hosts: [10.0.0.5, "10.0.0.6:5684", "[fd00::7]:5690", "fd00::8"]
            rt: [temperature, core.rd]
            if: [sensor]
            paths: {include: ["/sensors/*"], exclude: [/sensors/debug]}
            discoveryIntervalSeconds: 5
            responseTimeoutMillis: 300
            gracePeriodSeconds: 0
            typo: 1
            """);
    CoapDetails d = p.orThrow();
    assertThat(p.validation().warnings())
        .containsExactly("typo is not a coap setting and is ignored");
    assertThat(d.hosts())
        .containsExactly(
            new Endpoint(InetAddress.getByName("10.0.0.5"), 5683),
            new Endpoint(InetAddress.getByName("10.0.0.6"), 5684),
            new Endpoint(InetAddress.getByName("fd00::7"), 5690),
            new Endpoint(InetAddress.getByName("fd00::8"), 5683));
    assertThat(d.hosts().get(2).id()).isEqualTo("[fd00:0:0:0:0:0:0:7]:5690");
    assertThat(d.hosts().get(2).uri()).isEqualTo("coap://[fd00:0:0:0:0:0:0:7]:5690");
    assertThat(d.filter())
        .isEqualTo(
            new LinkFilter(
                List.of("temperature", "core.rd"),
                List.of("sensor"),
                List.of("/sensors/*"),
                List.of("/sensors/debug")));
    assertThat(d.networkInterfaces()).containsExactly("eth0", "10.0.0.2");
    assertThat(d.port()).isEqualTo(5700);
    assertThat(d.gracePeriod()).isZero();
  }

  @Test
  void everyErrorIsReportedWithItsField() {
    Parsed<CoapDetails> p =
        CoapDetails.parse(
            """
            multicast: false
            hosts: []
            port: 0
            paths: {include: ["/a*b"], exclude: 3}
            networkInterfaces: ["eth 0"]
            if: [""]
            """);
    assertThat(p.validation().errors()).hasSize(6).anyMatch(e -> e.startsWith("paths.exclude"));
    assertThat(p.validation().errors())
        .contains(
            "port must be between 1 and 65535 but is 0",
            "networkInterfaces[0] must be an interface name (e.g. eth0) or a local address, but is"
                + " \"eth 0\"",
            "if[0] must be one if value without spaces or quotes, but is \"\"",
            "paths.include[0] may hold * only at its end (a prefix), but is \"/a*b\"",
            "multicast is false and hosts is empty: nothing would be asked");
  }

  @Test
  void hostsAreIpLiteralsOnly() {
    for (String bad :
        List.of(
            "example.com",
            "10.0.0.256",
            "10.0.0.1:",
            "10.0.0.1:0",
            "[fd00::1",
            "[::1]x",
            "1.2.3")) {
      assertThat(CoapDetails.endpoint(bad)).as(bad).isEmpty();
    }
    assertThat(CoapDetails.endpoint("[fe80::1]:5683")).isPresent();
  }
}
