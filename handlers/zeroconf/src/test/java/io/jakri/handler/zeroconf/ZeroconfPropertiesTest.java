package io.jakri.handler.zeroconf;

import static io.jakri.handler.zeroconf.Services.service;
import static io.jakri.handler.zeroconf.Services.withTxt;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ZeroconfPropertiesTest {

  @Test
  void fixedPropertiesDescribeTheService() {
    Map<String, String> props = ZeroconfProperties.of(service("printer", 631));

    assertThat(props)
        .containsExactly(
            Map.entry("AKRI_ZEROCONF", "zeroconf"),
            Map.entry("AKRI_ZEROCONF_DEVICE_KIND", "_http._tcp"),
            Map.entry("AKRI_ZEROCONF_DEVICE_NAME", "printer"),
            Map.entry("AKRI_ZEROCONF_DEVICE_HOST", "box.local"),
            Map.entry("AKRI_ZEROCONF_DEVICE_ADDR", "10.0.0.7"),
            Map.entry("AKRI_ZEROCONF_DEVICE_PORT", "631"));
  }

  @Test
  void txtRecordsBecomePrefixedUpperCaseProperties() {
    Map<String, String> props =
        ZeroconfProperties.of(
            service("p", 1, TxtEntry.of("model", "x1"), new TxtEntry("duplex", Optional.empty())));

    assertThat(props)
        .containsEntry("AKRI_ZEROCONF_DEVICE_MODEL", "x1")
        .containsEntry("AKRI_ZEROCONF_DEVICE_DUPLEX", "");
  }

  @Test
  void hostileKeysNeverLeaveThePrefix() {
    Map<String, String> props =
        ZeroconfProperties.of(
            service(
                "p",
                1,
                TxtEntry.of("LD_PRELOAD", "/evil.so"),
                TxtEntry.of("PATH", "/x"),
                TxtEntry.of("a", "b=c"),
                TxtEntry.of("my key", "spaces"),
                TxtEntry.of("ключ", "unicode"),
                TxtEntry.of("../x", "dots"),
                TxtEntry.of("ß", "sharp s")));

    assertThat(props)
        .containsEntry("AKRI_ZEROCONF_DEVICE_LD_PRELOAD", "/evil.so")
        .containsEntry("AKRI_ZEROCONF_DEVICE_PATH", "/x")
        .containsEntry("AKRI_ZEROCONF_DEVICE_A", "b=c")
        .containsEntry("AKRI_ZEROCONF_DEVICE_MY_KEY", "spaces")
        .containsEntry("AKRI_ZEROCONF_DEVICE_____", "unicode")
        .containsEntry("AKRI_ZEROCONF_DEVICE____X", "dots")
        .containsEntry("AKRI_ZEROCONF_DEVICE_SS", "sharp s")
        .doesNotContainKeys("LD_PRELOAD", "PATH");
    assertThat(props.keySet()).allMatch(k -> k.matches("AKRI_ZEROCONF(_DEVICE_[A-Z0-9_]+)?"));
  }

  @Test
  void txtKeyCannotOverrideAFixedProperty() {
    Map<String, String> props =
        ZeroconfProperties.of(
            service("real", 80, TxtEntry.of("name", "fake"), TxtEntry.of("Port", "1")));

    assertThat(props)
        .containsEntry("AKRI_ZEROCONF_DEVICE_NAME", "real")
        .containsEntry("AKRI_ZEROCONF_DEVICE_PORT", "80");
  }

  @Test
  void firstTxtKeyWinsWhenTwoNormaliseToTheSameName() {
    assertThat(
            ZeroconfProperties.of(
                service("p", 1, TxtEntry.of("a-b", "1"), TxtEntry.of("a.b", "2"))))
        .containsEntry("AKRI_ZEROCONF_DEVICE_A_B", "1");
  }

  @Test
  void valuesWithControlCharactersAreDropped() {
    Map<String, String> props =
        ZeroconfProperties.of(
            service(
                "p",
                1,
                TxtEntry.of("nul", "a\0b"),
                TxtEntry.of("lf", "a\nB=c"),
                TxtEntry.of("cr", "a\r"),
                TxtEntry.of("tab", "a\tb")));

    assertThat(props)
        .doesNotContainKeys(
            "AKRI_ZEROCONF_DEVICE_NUL", "AKRI_ZEROCONF_DEVICE_LF", "AKRI_ZEROCONF_DEVICE_CR")
        .containsEntry("AKRI_ZEROCONF_DEVICE_TAB", "a\tb");
  }

  @Test
  void valuesOverTheByteLimitAreDroppedNotTruncated() {
    String atLimit = "x".repeat(ZeroconfProperties.MAX_VALUE_BYTES);
    String overLimitInBytes = "é".repeat(ZeroconfProperties.MAX_VALUE_BYTES / 2 + 1);

    Map<String, String> props =
        ZeroconfProperties.of(
            service(
                "p",
                1,
                TxtEntry.of("ok", atLimit),
                TxtEntry.of("big", overLimitInBytes),
                TxtEntry.of("huge", "y".repeat(64 * 1024))));

    assertThat(props)
        .containsEntry("AKRI_ZEROCONF_DEVICE_OK", atLimit)
        .doesNotContainKeys("AKRI_ZEROCONF_DEVICE_BIG", "AKRI_ZEROCONF_DEVICE_HUGE");
  }

  @Test
  void overLongKeysAreDropped() {
    String key = "k".repeat(ZeroconfProperties.MAX_KEY_LENGTH + 1);

    assertThat(ZeroconfProperties.envName(key)).isEmpty();
    assertThat(ZeroconfProperties.envName(key.substring(1))).isPresent();
    assertThat(ZeroconfProperties.envName("")).isEmpty();
  }

  @Test
  void onlyTheFirstSixtyFourTxtEntriesAreUsed() {
    Map<String, String> props =
        ZeroconfProperties.of(withTxt(service("p", 1), Services.numbered(200)));

    assertThat(props.keySet().stream().filter(k -> k.matches("AKRI_ZEROCONF_DEVICE_K\\d+")))
        .hasSize(ZeroconfProperties.MAX_TXT_ENTRIES)
        .contains("AKRI_ZEROCONF_DEVICE_K0", "AKRI_ZEROCONF_DEVICE_K63")
        .doesNotContain("AKRI_ZEROCONF_DEVICE_K64");
  }

  @Test
  void controlCharactersInNamesAreReplaced() {
    assertThat(ZeroconfProperties.of(service("evil\nNAME=x", 1)))
        .containsEntry("AKRI_ZEROCONF_DEVICE_NAME", "evil?NAME=x");
  }

  @Test
  void unknownHostAndAddressAreLeftOut() {
    ServiceRecord bare =
        new ServiceRecord("p", Services.HTTP, "local", Optional.empty(), List.of(), 1, List.of());

    assertThat(ZeroconfProperties.of(bare))
        .doesNotContainKeys("AKRI_ZEROCONF_DEVICE_HOST", "AKRI_ZEROCONF_DEVICE_ADDR");
  }
}
