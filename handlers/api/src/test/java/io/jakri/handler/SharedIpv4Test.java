package io.jakri.handler;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SharedIpv4Test {

  @Test
  void aChosenInterfaceWhoseAddressAnotherCarriesIsNamedWithTheOther() {
    Map<String, List<String>> host = new LinkedHashMap<>();
    host.put("eth0", List.of("192.168.1.10"));
    host.put("line1", List.of("10.0.0.1"));
    host.put("line2", List.of("10.0.0.1", "10.0.2.1"));

    assertThat(SharedIpv4.among(List.of("eth0", "line1"), host))
        .containsExactly(
            "interface line1 shares its IPv4 address 10.0.0.1 with line2: IPv4 multicast sent on"
                + " line1 may leave through it instead (the JVM picks an IPv4 multicast interface"
                + " by its address); give each interface its own address");
  }

  @Test
  void everyOtherHolderIsNamed() {
    Map<String, List<String>> host = new LinkedHashMap<>();
    host.put("a", List.of("10.0.0.1"));
    host.put("b", List.of("10.0.0.1"));
    host.put("c", List.of("10.0.0.1"));

    assertThat(SharedIpv4.among(List.of("a"), host))
        .singleElement()
        .asString()
        .contains("10.0.0.1 with b, c:", "one of them");
  }

  @Test
  void distinctAddressesAndUnchosenSharersSayNothing() {
    Map<String, List<String>> host = new LinkedHashMap<>();
    host.put("eth0", List.of("192.168.1.10"));
    host.put("line1", List.of("10.0.0.1"));
    host.put("line2", List.of("10.0.0.1"));

    assertThat(SharedIpv4.among(List.of("eth0"), host)).isEmpty();
    assertThat(SharedIpv4.among(List.of("eth0", "missing"), host)).isEmpty();
  }

  @Test
  void onceSaysEachLineOnceAndANewSharerAgain() {
    Map<String, List<String>> host = new LinkedHashMap<>();
    host.put("line1", List.of("10.0.0.1"));
    host.put("line2", List.of("10.0.0.1"));
    SharedIpv4.Once once = new SharedIpv4.Once();

    assertThat(once.fresh(List.of("line1"), host)).hasSize(1);
    assertThat(once.fresh(List.of("line1"), host)).isEmpty();

    host.put("line3", List.of("10.0.0.1"));
    assertThat(once.fresh(List.of("line1"), host))
        .singleElement()
        .asString()
        .contains("with line2, line3:");
    assertThat(new SharedIpv4.Once().fresh(List.of("line1"), host)).hasSize(1);
  }

  @Test
  void thisHostsInterfacesAreRead() throws Exception {
    // Whatever this host has: a chosen loopback shares 127.0.0.1 with no other interface.
    java.net.NetworkInterface lo = java.net.NetworkInterface.getByName("lo");
    assertThat(lo).isNotNull();
    assertThat(SharedIpv4.on(List.of(lo))).isEmpty();
  }
}
