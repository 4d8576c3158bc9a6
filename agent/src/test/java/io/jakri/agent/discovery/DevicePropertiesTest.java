package io.jakri.agent.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.model.EnvContract;
import io.jakri.handler.DiscoveredDevice;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link DeviceProperties} on its own. */
class DevicePropertiesTest {

  private final DeviceProperties properties = new DeviceProperties();

  @Test
  void eachDroppedNameIsReportedOncePerConfiguration() {
    DiscoveredDevice device = DiscoveredDevice.of("a", Map.of("not-a-name", "1", "OK", "2"), false);
    List<String> first = new ArrayList<>();
    properties.dropped(List.of(device, device), first);
    List<String> second = new ArrayList<>();
    properties.dropped(List.of(device), second);

    assertThat(first)
        .singleElement()
        .asString()
        .startsWith("device property \"not-a-name\" is not given to containers: ");
    assertThat(second).isEmpty();
    // Another table (Configuration) reports it again.
    List<String> other = new ArrayList<>();
    new DeviceProperties().dropped(List.of(device), other);
    assertThat(other).hasSize(1);
  }

  @Test
  void atMostALimitedNumberOfDroppedNamesIsReported() {
    Map<String, String> bad = new HashMap<>();
    for (int i = 0; i < DeviceProperties.MAX_DROPPED_LOGGED + 50; i++) {
      bad.put("bad-" + i, "x");
    }
    List<String> warnings = new ArrayList<>();
    properties.dropped(List.of(DiscoveredDevice.of("a", bad, false)), warnings);
    assertThat(warnings).hasSize(DeviceProperties.MAX_DROPPED_LOGGED);
  }

  @Test
  void aDeviceWithinTheLimitIsKeptAsItIs() {
    DiscoveredDevice device = DiscoveredDevice.of("a", Map.of("A", "1"), false);
    assertThat(DeviceProperties.bounded(device)).isSameAs(device);
  }

  @Test
  void aDeviceOverTheLimitKeepsOnlyWhatAContainerCouldSee() {
    Map<String, String> many = new HashMap<>();
    for (int i = 0; i < EnvContract.MAX_PROPERTIES * 4; i++) {
      many.put("P" + i, "v");
    }
    DiscoveredDevice device = DiscoveredDevice.of("a", many, true);
    DiscoveredDevice bounded = DeviceProperties.bounded(device);
    assertThat(bounded.properties()).hasSizeLessThanOrEqualTo(EnvContract.MAX_PROPERTIES);
    assertThat(bounded.properties()).isEqualTo(EnvContract.mergedProperties(many, Map.of()));
    assertThat(bounded.id()).isEqualTo("a");
    assertThat(bounded.shared()).isTrue();
  }
}
