package io.jakri.agent.external;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.handler.DiscoveredDevice;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import v0.Discovery.DeviceSpec;
import v0.Discovery.DiscoverResponse;
import v0.Discovery.Mount;

class DiscoverResponsesTest {

  static final ExternalEndpoint FROM =
      new ExternalEndpoint("udev", "/var/lib/akri/udev.sock", ExternalEndpoint.Type.UDS, false);

  @Test
  void akrisDeviceMapsToTheAgentsWithSharedFromTheRegistration() {
    DiscoverResponse response =
        DiscoverResponse.newBuilder()
            .addDevices(
                v0.Discovery.Device.newBuilder()
                    .setId("/dev/video0")
                    .putProperties("UDEV_DEVNODE", "/dev/video0")
                    .addMounts(
                        Mount.newBuilder()
                            .setContainerPath("/c")
                            .setHostPath("/h")
                            .setReadOnly(true))
                    .addDeviceSpecs(
                        DeviceSpec.newBuilder()
                            .setContainerPath("/dev/v")
                            .setHostPath("/dev/video0")
                            .setPermissions("rwm")))
            .build();
    List<DiscoveredDevice> unshared = DiscoverResponses.devices(response, false, "cfg", FROM);
    assertThat(unshared)
        .containsExactly(
            new DiscoveredDevice(
                "/dev/video0",
                Map.of("UDEV_DEVNODE", "/dev/video0"),
                List.of(new DiscoveredDevice.Mount("/c", "/h", true)),
                List.of(new DiscoveredDevice.DeviceSpec("/dev/v", "/dev/video0", "rwm")),
                Map.of(),
                java.util.Optional.empty(),
                false));
    assertThat(DiscoverResponses.devices(response, true, "cfg", FROM).get(0).shared()).isTrue();
  }

  @Test
  void aHundredThousandDevicesAreCutToTheAgentsLimit() {
    DiscoverResponse.Builder response = DiscoverResponse.newBuilder();
    for (int i = 0; i < 100_000; i++) {
      response.addDevices(v0.Discovery.Device.newBuilder().setId("d" + i));
    }
    List<DiscoveredDevice> devices =
        DiscoverResponses.devices(response.build(), false, "cfg", FROM);
    assertThat(devices).hasSize(DiscoveryManager.MAX_DEVICES);
    assertThat(devices.get(0).id()).isEqualTo("d0");
  }

  @Test
  void propertiesNoContainerCouldGetAreLeftOut() {
    DiscoverResponse response =
        DiscoverResponse.newBuilder()
            .addDevices(
                v0.Discovery.Device.newBuilder()
                    .setId("big")
                    .putProperties("BIG", "x".repeat(1024 * 1024))
                    .putProperties("SMALL", "ok"))
            .build();
    assertThat(DiscoverResponses.devices(response, false, "cfg", FROM).get(0).properties())
        .isEqualTo(Map.of("SMALL", "ok"));
  }
}
