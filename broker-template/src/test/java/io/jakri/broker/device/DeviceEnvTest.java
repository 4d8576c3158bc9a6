package io.jakri.broker.device;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class DeviceEnvTest {

  private static final String WIDGET = "EXAMPLECOM_WIDGET";

  @Test
  void spookdSeedListingGivesTheWidgetAndTheThingamajigAsClassGrants() {
    DeviceEnv env = DeviceEnv.parse(EnvListing.load("spookd-seed.env"));

    assertThat(env.classes())
        .containsExactly(
            new ClassGrant(
                "EXAMPLECOM_THINGAMAJIG",
                1,
                List.of(Device.of(Map.of("ID", "A1234", "TYPE", "example.com/thingamajig")))),
            new ClassGrant(
                WIDGET,
                1,
                List.of(
                    Device.of(
                        Map.of(
                            "ID", "0001",
                            "IP", "192.168.0.200",
                            "PORT", "12345",
                            "TYPE", "example.com/widget")))));
    assertThat(env.classes().get(1).isFor("example.com/widget")).isTrue();
    assertThat(env.instances()).isEmpty();
    assertThat(env.warnings()).isEmpty();
  }

  @Test
  void containerEnvThatIsNoDevicesIsNeverPartOfTheResult() {
    DeviceEnv env = DeviceEnv.parse(EnvListing.load("spookd-seed.env"));

    List<String> names =
        env.grants().stream()
            .flatMap(g -> g.devices().stream())
            .flatMap(d -> d.properties().stream())
            .map(Property::name)
            .toList();
    assertThat(names).doesNotContain("HOME", "PATH", "HOSTNAME", "TERM", "KUBERNETES_PORT");
    assertThat(
            DeviceEnv.parse(
                    Map.of("HOME", "/root", "KUBERNETES_SERVICE_PORT", "443", "PATH", "/bin"))
                .isEmpty())
        .isTrue();
  }

  @Test
  void debugEchoInstanceListingGivesOneInstanceNamedByItsHash() {
    DeviceEnv env = DeviceEnv.parse(EnvListing.load("debug-echo-instance.env"));

    assertThat(env.classes()).isEmpty();
    assertThat(env.instances())
        .containsExactly(
            new InstanceGrant(
                "8120FE",
                Device.of(
                    Map.of(
                        "BROKER_GREETING", "hello from jakri",
                        "DEBUG_ECHO_DESCRIPTION", "foo0"))));
    assertThat(env.instances().get(0).instanceNameSuffix()).isEqualTo("8120fe");
  }

  @Test
  void defaultClassListingGivesBothClassDevicesInSlotOrderAndBothInstances() {
    DeviceEnv env = DeviceEnv.parse(EnvListing.load("debug-echo-class.env"));

    Device foo0 =
        Device.of(Map.of("BROKER_GREETING", "hello from jakri", "DEBUG_ECHO_DESCRIPTION", "foo0"));
    Device foo1 =
        Device.of(Map.of("BROKER_GREETING", "hello from jakri", "DEBUG_ECHO_DESCRIPTION", "foo1"));
    assertThat(env.classes())
        .containsExactly(new ClassGrant("AKRISH_AKRI_DEBUG_ECHO_FOO", 2, List.of(foo0, foo1)));
    assertThat(env.classes().get(0).isFor("akri.sh/akri-debug-echo-foo")).isTrue();
    assertThat(env.instances())
        .containsExactly(new InstanceGrant("8120FE", foo0), new InstanceGrant("A19705", foo1));
  }

  @Test
  void simpleDeviceListingGivesTwoClassDevicesWithoutPropertiesBesideTheSeedsEnv() {
    // The simple device plugin's <ENV_PREFIX>_<device id> entries are its own, not properties.
    DeviceEnv env = DeviceEnv.parse(EnvListing.load("simple-device-class.env"));

    assertThat(env.classes())
        .containsExactly(
            new ClassGrant(
                "EXAMPLECOM_SIMPLE_DEVICE", 2, List.of(Device.of(Map.of()), Device.of(Map.of()))));
    assertThat(env.instances()).isEmpty();
  }

  @Test
  void zeroconfInstanceListingGivesTheServicePropertiesAndIgnoresServiceLinks() {
    DeviceEnv env = DeviceEnv.parse(EnvListing.load("zeroconf-instance.env"));

    assertThat(env.classes()).isEmpty();
    assertThat(env.instances()).hasSize(1);
    InstanceGrant grant = env.instances().get(0);
    assertThat(grant.hash()).isEqualTo("218F68");
    assertThat(grant.device().asMap())
        .containsExactlyEntriesOf(
            new TreeMap<>(
                Map.of(
                    "AKRI_ZEROCONF", "zeroconf",
                    "AKRI_ZEROCONF_DEVICE_ADDR", "192.168.1.23",
                    "AKRI_ZEROCONF_DEVICE_COMPONENT", "avahi-publish",
                    "AKRI_ZEROCONF_DEVICE_HOST", "akri.local",
                    "AKRI_ZEROCONF_DEVICE_KIND", "_rust._tcp",
                    "AKRI_ZEROCONF_DEVICE_NAME", "freddie",
                    "AKRI_ZEROCONF_DEVICE_PORT", "8888",
                    "AKRI_ZEROCONF_DEVICE_PROJECT", "akri",
                    "AKRI_ZEROCONF_DEVICE_PROTOCOL", "zeroconf")));
  }

  @Test
  void classDevicesWithoutPropertiesAreStillCounted() {
    DeviceEnv env = DeviceEnv.parse(Map.of("EXAMPLECOM_SIMPLE_DEVICE_NUM_DEVICES", "2"));

    assertThat(env.classes())
        .containsExactly(
            new ClassGrant(
                "EXAMPLECOM_SIMPLE_DEVICE", 2, List.of(Device.of(Map.of()), Device.of(Map.of()))));
  }

  @Test
  void twoInstancesOfOneConfigurationAreBothFoundThoughThePlainNamesClash() {
    // The kubelet merges both allocations; the second Instance's plain K overwrites the first's.
    DeviceEnv env =
        DeviceEnv.parse(
            Map.of(
                "DEBUG_ECHO_DESCRIPTION", "foo1",
                "DEBUG_ECHO_DESCRIPTION_8120FE", "foo0",
                "DEBUG_ECHO_DESCRIPTION_A19705", "foo1"));

    assertThat(env.instances())
        .containsExactly(
            new InstanceGrant("8120FE", Device.of(Map.of("DEBUG_ECHO_DESCRIPTION", "foo0"))),
            new InstanceGrant("A19705", Device.of(Map.of("DEBUG_ECHO_DESCRIPTION", "foo1"))));
  }

  @Test
  void aHexSuffixWhosePlainNameHoldsAnotherValueIsNoInstance() {
    DeviceEnv env = DeviceEnv.parse(Map.of("COLOR", "red", "COLOR_ABCDEF", "blue"));

    assertThat(env.isEmpty()).isTrue();
  }

  @Test
  void aDevicePropertyNamedLikeACountDoesNotMakeAnotherClass() {
    Map<String, String> listing = new LinkedHashMap<>();
    listing.put(WIDGET + "_NUM_DEVICES", "1");
    listing.put(WIDGET + "_DEV0_CHANNEL_NUM_DEVICES", "7");
    listing.put(WIDGET + "_CHANNEL_NUM_DEVICES", "7");
    listing.put(WIDGET + "_DEV0_ID", "0001");
    listing.put(WIDGET + "_ID", "0001");

    DeviceEnv env = DeviceEnv.parse(listing);

    assertThat(env.classes())
        .containsExactly(
            new ClassGrant(
                WIDGET, 1, List.of(Device.of(Map.of("ID", "0001", "CHANNEL_NUM_DEVICES", "7")))));
  }

  @Test
  void devicesBeyondTheCountAreNotRead() {
    DeviceEnv env =
        DeviceEnv.parse(
            Map.of(
                WIDGET + "_NUM_DEVICES", "1",
                WIDGET + "_DEV0_ID", "a",
                WIDGET + "_DEV1_ID", "b"));

    assertThat(env.classes().get(0).devices()).containsExactly(Device.of(Map.of("ID", "a")));
  }

  @Test
  void aHugeDeviceCountIsBoundedAndWarned() {
    DeviceEnv env = DeviceEnv.parse(Map.of(WIDGET + "_NUM_DEVICES", "999999999"));

    ClassGrant grant = env.classes().get(0);
    assertThat(grant.numDevices()).isEqualTo(999_999_999);
    assertThat(grant.devices()).hasSize(DeviceEnv.MAX_DEVICES);
    assertThat(env.warnings())
        .containsExactly(WIDGET + "_NUM_DEVICES is 999999999; only the first 256 devices are read");
  }

  @Test
  void countsThatAreNotSmallDecimalNumbersMakeNoClass() {
    DeviceEnv env =
        DeviceEnv.parse(
            Map.of(
                "A_NUM_DEVICES", "0",
                "B_NUM_DEVICES", "-1",
                "C_NUM_DEVICES", "1e3",
                "D_NUM_DEVICES", "12345678901",
                "_NUM_DEVICES", "1"));

    assertThat(env.isEmpty()).isTrue();
  }

  @Test
  void invalidNamesAndOverlongValuesAreIgnoredWithAWarning() {
    Map<String, String> listing = new HashMap<>();
    listing.put(WIDGET + "_NUM_DEVICES", "1");
    listing.put(WIDGET + "_DEV0_OK", "fine");
    listing.put(WIDGET + "_DEV0_BIG", "x".repeat(DeviceEnv.MAX_VALUE_LENGTH + 1));
    listing.put(WIDGET + "_DEV0_NUL", "a\0b");
    listing.put("BAD-NAME", "v");
    listing.put("X".repeat(DeviceEnv.MAX_NAME_LENGTH + 1), "v");
    listing.put(null, "v");
    listing.put("NULL_VALUE", null);

    DeviceEnv env = DeviceEnv.parse(listing);

    assertThat(env.classes().get(0).devices()).containsExactly(Device.of(Map.of("OK", "fine")));
    assertThat(env.warnings())
        .containsExactly(
            "6 env entries with an invalid name or a value over 4096 characters were ignored");
  }

  @Test
  void onlyTheFirstEntriesInNameOrderAreExamined() {
    Map<String, String> listing = new HashMap<>();
    for (int i = 0; i < DeviceEnv.MAX_ENTRIES; i++) {
      listing.put(String.format("A%05d", i), "v");
    }
    listing.put("Z_NUM_DEVICES", "1");

    DeviceEnv env = DeviceEnv.parse(listing);

    assertThat(env.isEmpty()).isTrue();
    assertThat(env.warnings()).containsExactly("1 env entries beyond the first 4096 were ignored");
  }

  @Test
  void grantsAreBounded() {
    Map<String, String> listing = new HashMap<>();
    for (int i = 0; i < DeviceEnv.MAX_GRANTS + 5; i++) {
      listing.put("C" + i + "_NUM_DEVICES", "1");
    }

    DeviceEnv env = DeviceEnv.parse(listing);

    assertThat(env.grants()).hasSize(DeviceEnv.MAX_GRANTS);
    assertThat(env.warnings()).containsExactly("more than 64 grants; the rest are left out");
  }
}
