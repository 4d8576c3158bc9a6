package io.jakri.handler.zeroconf;

import static io.jakri.handler.zeroconf.Services.service;
import static io.jakri.handler.zeroconf.Services.withAddresses;
import static io.jakri.handler.zeroconf.Services.withTxt;
import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.DiscoveredDevice;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ServiceTableTest {

  private static final ServiceFilter ALL =
      new ServiceFilter(Optional.empty(), Optional.empty(), Map.of());

  @Test
  void resolvingTheSameServiceAgainChangesNothing() {
    ServiceTable table = new ServiceTable(10);

    assertThat(table.put("if1", service("a", 1))).isEqualTo(ServiceTable.Change.CHANGED);
    assertThat(table.put("if1", service("a", 1))).isEqualTo(ServiceTable.Change.UNCHANGED);
    assertThat(table.put("if1", service("a", 2))).isEqualTo(ServiceTable.Change.CHANGED);
  }

  @Test
  void aResolutionWithoutTxtKeepsTheTxtSeenBefore() {
    ServiceTable table = new ServiceTable(10);
    table.put("if1", service("a", 1, TxtEntry.of("k", "v")));

    assertThat(table.put("if1", service("a", 1))).isEqualTo(ServiceTable.Change.UNCHANGED);
    assertThat(table.merged())
        .singleElement()
        .extracting(ServiceRecord::txt)
        .asList()
        .containsExactly(TxtEntry.of("k", "v"));
  }

  @Test
  void txtArrivingLaterUpdatesTheService() {
    ServiceTable table = new ServiceTable(10);
    table.put("if1", service("a", 1));

    assertThat(table.put("if1", service("a", 1, TxtEntry.of("k", "v"))))
        .isEqualTo(ServiceTable.Change.CHANGED);
    assertThat(table.snapshot(ALL).get(0).properties())
        .containsEntry("AKRI_ZEROCONF_DEVICE_K", "v");
  }

  @Test
  void removingOnOneSourceKeepsTheServiceSeenOnAnother() {
    ServiceTable table = new ServiceTable(10);
    table.put("if1", service("a", 1));
    table.put("if2", service("A", 1));

    assertThat(table.remove("if1", "a")).isTrue();
    assertThat(table.snapshot(ALL)).hasSize(1);
    assertThat(table.remove("if2", "a")).isTrue();
    assertThat(table.snapshot(ALL)).isEmpty();
    assertThat(table.remove("if2", "a")).isFalse();
  }

  @Test
  void mergesAddressesOverSourcesIpv4First() {
    ServiceTable table = new ServiceTable(10);
    table.put("if1", withAddresses(service("a", 1), "fe80::1", "10.0.0.1"));
    table.put("if2", withAddresses(service("a", 1), "10.0.0.2", "10.0.0.1"));

    assertThat(table.merged().get(0).addresses())
        .containsExactly("10.0.0.1", "10.0.0.2", "fe80::1");
  }

  @Test
  void refusesServicesBeyondCapacityButStillUpdatesKnownOnes() {
    ServiceTable table = new ServiceTable(2);
    table.put("if1", service("a", 1));
    table.put("if1", service("b", 1));

    assertThat(table.put("if1", service("c", 1))).isEqualTo(ServiceTable.Change.FULL);
    assertThat(table.put("if2", service("a", 1))).isEqualTo(ServiceTable.Change.CHANGED);
    table.remove("if1", "b");
    assertThat(table.put("if1", service("c", 1))).isEqualTo(ServiceTable.Change.CHANGED);
  }

  @Test
  void snapshotHoldsSharedDevicesNamedByFullServiceNameSortedAndFiltered() {
    ServiceTable table = new ServiceTable(10);
    table.put("if1", service("zeta", 80));
    table.put("if1", service("alpha", 80));
    table.put("if1", service("other", 81));
    ServiceFilter port80 = new ServiceFilter(Optional.empty(), Optional.of(80), Map.of());

    List<DiscoveredDevice> devices = table.snapshot(port80);

    assertThat(devices)
        .extracting(DiscoveredDevice::id)
        .containsExactly("alpha._http._tcp.local", "zeta._http._tcp.local");
    assertThat(devices).allMatch(DiscoveredDevice::shared);
  }

  @Test
  void filterSeesTxtThatArrivedLater() {
    ServiceTable table = new ServiceTable(10);
    ServiceFilter wantsModel =
        new ServiceFilter(Optional.empty(), Optional.empty(), Map.of("model", "x"));
    table.put("if1", service("a", 1));
    assertThat(table.snapshot(wantsModel)).isEmpty();

    table.put("if1", withTxt(service("a", 1), List.of(TxtEntry.of("model", "x"))));

    assertThat(table.snapshot(wantsModel)).hasSize(1);
  }
}
