package io.jakri.broker.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.broker.device.DeviceEnv;
import io.jakri.broker.device.EnvListing;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DeviceJsonTest {

  @Test
  void spookdSeedListingRendersBothClasses() {
    String json = DeviceJson.render(DeviceEnv.parse(EnvListing.load("spookd-seed.env")));

    assertThat(json)
        .isEqualTo(
            """
            {
              "classes": [
                {"prefix": "EXAMPLECOM_THINGAMAJIG", "numDevices": 1, "devices": [
                  {"index": 0, "properties": {"ID": "A1234", "TYPE": "example.com/thingamajig"}}
                ]},
                {"prefix": "EXAMPLECOM_WIDGET", "numDevices": 1, "devices": [
                  {"index": 0, "properties": {"ID": "0001", "IP": "192.168.0.200", "PORT": "12345", "TYPE": "example.com/widget"}}
                ]}
              ],
              "instances": [],
              "warnings": []
            }
            """);
  }

  @Test
  void debugEchoInstanceListingRendersTheInstance() {
    String json = DeviceJson.render(DeviceEnv.parse(EnvListing.load("debug-echo-instance.env")));

    assertThat(json)
        .isEqualTo(
            """
            {
              "classes": [],
              "instances": [
                {"hash": "8120FE", "instanceNameSuffix": "8120fe", "properties": {"BROKER_GREETING": "hello from jakri", "DEBUG_ECHO_DESCRIPTION": "foo0"}}
              ],
              "warnings": []
            }
            """);
  }

  @Test
  void hostileValuesAreEscaped() {
    String json =
        DeviceJson.render(
            DeviceEnv.parse(
                Map.of(
                    "X_NUM_DEVICES", "1",
                    "X_DEV0_NAME", "\"},{\"evil\":\"<script>\n")));

    assertThat(json)
        .contains("{\"NAME\": \"\\\"},{\\\"evil\\\":\\\"\\u003cscript\\u003e\\n\"}")
        .doesNotContain("<script>");
  }

  @Test
  void noDevicesRendersEmptyLists() {
    assertThat(DeviceJson.render(DeviceEnv.parse(Map.of("PATH", "/bin"))))
        .isEqualTo(
            """
            {
              "classes": [],
              "instances": [],
              "warnings": []
            }
            """);
  }
}
