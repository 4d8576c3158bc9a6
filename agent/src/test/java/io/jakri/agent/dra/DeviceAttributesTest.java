package io.jakri.agent.dra;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DeviceAttributesTest {

  @Test
  void ownAttributesThenPropertiesInNameOrder() {
    DeviceAttributes a =
        DeviceAttributes.of(
            "cams", "cams-8120fe", "udev", 1, false, Map.of("SUBSYSTEM", "video4linux", "A", "x"));
    assertThat(a.attributes().keySet())
        .containsExactly(
            "akri.sh/configuration",
            "akri.sh/instance",
            "akri.sh/handler",
            "akri.sh/slot",
            "akri.sh/shared",
            "property.akri.sh/A",
            "property.akri.sh/SUBSYSTEM");
    assertThat(a.attributes().get("akri.sh/slot").getInt()).isEqualTo(1L);
    assertThat(a.attributes().get("akri.sh/shared").getBool()).isFalse();
    assertThat(a.attributes().get("property.akri.sh/SUBSYSTEM").getString())
        .isEqualTo("video4linux");
    assertThat(a.problems()).isEmpty();
  }

  @Test
  void namesDraCannotCarryAreLeftOutAndSaidSo() {
    Map<String, String> props = new LinkedHashMap<>();
    props.put("txt.path", "/x");
    props.put("9LIVES", "x");
    props.put("N".repeat(33), "x");
    props.put("N".repeat(32), "ok");
    DeviceAttributes a = DeviceAttributes.of("c", "c-1", "h", 0, true, props);
    assertThat(a.attributes()).containsKey("property.akri.sh/" + "N".repeat(32));
    assertThat(a.attributes()).hasSize(6);
    assertThat(a.problems())
        .containsExactlyInAnyOrder(
            "property txt.path left out: an attribute name must be a C identifier of at most 32"
                + " characters",
            "property 9LIVES left out: an attribute name must be a C identifier of at most 32"
                + " characters",
            "property "
                + "N".repeat(33)
                + " left out: an attribute name must be a C identifier of at most 32 characters");
  }

  @Test
  void longValuesAreHashedToFit() {
    String url = "rtsp://camera.example.com:554/" + "stream/".repeat(10);
    DeviceAttributes a = DeviceAttributes.of("c", "c-1", "h", 0, true, Map.of("URL", url));
    String v = a.attributes().get("property.akri.sh/URL").getString();
    assertThat(v).matches("sha256:[0-9a-f]{56}").hasSizeLessThanOrEqualTo(64);
    assertThat(v).isEqualTo("sha256:" + DraNames.hash(url, 56));
    assertThat(a.problems())
        .containsExactly(
            "property URL value hashed: a string attribute holds at most 64 bytes (published as"
                + " sha256:<56 hex digits>)");
    // 64 bytes fit; multi-byte characters count as bytes.
    assertThat(
            DeviceAttributes.of("c", "c-1", "h", 0, true, Map.of("V", "x".repeat(64))).problems())
        .isEmpty();
    assertThat(
            DeviceAttributes.of("c", "c-1", "h", 0, true, Map.of("V", "\u00e9".repeat(33)))
                .problems())
        .hasSize(1);
  }

  @Test
  void atMost32AttributesPerDevice() {
    Map<String, String> props = new LinkedHashMap<>();
    for (int i = 0; i < 40; i++) {
      props.put(String.format("P%02d", i), "v");
    }
    DeviceAttributes a = DeviceAttributes.of("c", "c-1", "h", 0, true, props);
    assertThat(a.attributes()).hasSize(32);
    assertThat(a.attributes())
        .containsKey("property.akri.sh/P26")
        .doesNotContainKey("property.akri.sh/P27");
    assertThat(a.problems())
        .containsExactly(
            "properties P27, P28, P29, P30, P31, P32, P33, P34, P35, P36, P37, P38, P39 left out:"
                + " a device has at most 32 attributes (properties are taken in name order)");
  }
}
