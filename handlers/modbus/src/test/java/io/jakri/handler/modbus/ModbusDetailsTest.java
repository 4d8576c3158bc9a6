package io.jakri.handler.modbus;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.Parsed;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ModbusDetailsTest {

  @Test
  void defaults() {
    ModbusDetails d =
        ModbusDetails.parse("addresses: [10.0.0.0/30, plc.example.com]").details().orElseThrow();
    assertThat(d.ports()).containsExactly(502);
    assertThat(d.unitIds()).containsExactly(1, 255);
    assertThat(d.eachUnit()).isFalse();
    assertThat(d.scanInterval()).isEqualTo(Duration.ofSeconds(30));
    assertThat(d.gracePeriod()).isEqualTo(Duration.ofSeconds(60));
    assertThat(d.timeout()).isEqualTo(Duration.ofSeconds(1));
    assertThat(d.connectionsPerSecond()).isEqualTo(50);
    assertThat(d.maxAddresses()).isEqualTo(256);
    assertThat(d.addresses())
        .extracting(Target::text)
        .containsExactly("10.0.0.0/30", "plc.example.com");
    assertThat(((Target.Block) d.addresses().get(0)).addresses())
        .containsExactly("10.0.0.0", "10.0.0.1", "10.0.0.2", "10.0.0.3");
  }

  @Test
  void addressesAreRequired() {
    assertThat(ModbusDetails.parse("ports: [502]").errors())
        .singleElement()
        .asString()
        .startsWith("addresses is required");
  }

  @Test
  void addressErrorsNameTheEntryAndTheColumn() {
    List<String> errors =
        ModbusDetails.parse(
                "addresses: [10.0.0.300, 10.0.0.0/33, 10.0.0.1/24, plc_1.example, host/24, ''] ")
            .errors();
    assertThat(errors)
        .containsExactly(
            "addresses[0] \"10.0.0.300\": column 1: \"10.0.0.300\" is not an IPv4 or IPv6 address",
            "addresses[1] \"10.0.0.0/33\": column 10: prefix length must be a number from 0 to 32",
            "addresses[2] \"10.0.0.1/24\": column 10: host bits are set: the block /24 starts at"
                + " 10.0.0.0",
            "addresses[3] \"plc_1.example\": column 4: character '_' is not allowed in a host name",
            "addresses[4] \"host/24\": column 5: a host name takes no /prefix",
            "addresses[5] \"\": column 1: empty entry");
  }

  @Test
  void aBlockOverTheCapIsRefused() {
    assertThat(ModbusDetails.parse("addresses: [10.0.0.0/16]").errors())
        .containsExactly(
            "addresses[0] \"10.0.0.0/16\": 65536 addresses, more than maxAddresses (256): list a"
                + " smaller block or raise maxAddresses (at most 4096)");
    assertThat(ModbusDetails.parse("addresses: [10.0.0.0/20]\nmaxAddresses: 4096\n").errors())
        .isEmpty();
    assertThat(ModbusDetails.parse("addresses: [10.0.0.0/25, 10.0.1.0/25, 10.0.2.1]").errors())
        .containsExactly("addresses stand for 257 addresses in all, more than maxAddresses (256)");
    assertThat(ModbusDetails.parse("addresses: [\"::/0\"]").errors())
        .singleElement()
        .asString()
        .contains("more than 2^62 addresses");
    assertThat(ModbusDetails.parse("addresses: [\"fd00::/120\"]").errors()).isEmpty();
  }

  @Test
  void numbersAreChecked() {
    assertThat(
            ModbusDetails.parse(
                    "addresses: [127.0.0.1]\nports: [0, 502, 502]\nunitIds: [256]\n"
                        + "scanIntervalSeconds: 0\ntimeoutMillis: 10\nconnectionsPerSecond: 5000\n"
                        + "gracePeriodSeconds: -1\nmaxAddresses: 0\ncolour: red\n")
                .errors())
        .containsExactly(
            "maxAddresses must be between 1 and 4096 but is 0",
            "ports[0] must be a number from 1 to 65535 but is \"0\"",
            "unitIds[0] must be a number from 0 to 255 but is \"256\"",
            "scanIntervalSeconds must be between 1 and 3600 but is 0",
            "gracePeriodSeconds must be between 0 and 86400 but is -1",
            "timeoutMillis must be between 50 and 30000 but is 10",
            "connectionsPerSecond must be between 1 and 1000 but is 5000");
    Parsed<ModbusDetails> warned =
        ModbusDetails.parse("addresses: [127.0.0.1]\nports: [502, 502]\ncolour: red\n");
    assertThat(warned.warnings())
        .containsExactly(
            "ports[1] repeats 502 and is ignored", "colour is not a modbus setting and is ignored");
  }

  @Test
  void filtersInAkrisStyleExactOrRegex() {
    ModbusDetails d =
        ModbusDetails.parse(
                "addresses: [127.0.0.1]\nvendor: {action: Include, items: [Acme]}\n"
                    + "productCode: {action: Exclude, items: [\"X-.*\"], match: Regex}\n"
                    + "revision: {items: [\"1\\\\..*\"], match: Regex}\n")
            .details()
            .orElseThrow();
    assertThat(d.admits(identity("Acme", "PC-1", "1.4"))).isTrue();
    assertThat(d.admits(identity("Acme Corp", "PC-1", "1.4"))).isFalse();
    assertThat(d.admits(identity("Acme", "X-9", "1.4"))).isFalse();
    assertThat(d.admits(identity("Acme", "PC-1", "2.0"))).isFalse();
    assertThat(d.admits(identity("Acme", "PC-1", "11.0"))).isFalse();
  }

  @Test
  void filterErrorsNameTheFieldAndTheRegexColumn() {
    assertThat(
            ModbusDetails.parse(
                    "addresses: [127.0.0.1]\nvendor: {action: Maybe, items: [a]}\n"
                        + "productCode: {match: Glob, items: [a]}\n"
                        + "revision: {match: Regex, items: [\"ok\", \"1.(\"]}\n"
                        + "vendorX: 1\n")
                .errors())
        .containsExactly(
            "vendor.action must be Include or Exclude but is \"Maybe\"",
            "productCode.match must be Exact or Regex but is \"Glob\"",
            "revision.items[1] \"1.(\": column 4: bad regular expression: Unclosed group");
    assertThat(ModbusDetails.parse("addresses: [127.0.0.1]\nvendor: {action: Include}\n").errors())
        .containsExactly("vendor.items is required (as in Akri's filters)");
    assertThat(
            ModbusDetails.parse("addresses: [127.0.0.1]\nvendor: {action: Include, items: []}\n")
                .warnings())
        .containsExactly(
            "vendor.items is empty with action Include: no device is admitted (as in Akri)");
  }

  @Test
  void brokenYamlIsAnErrorWithItsPosition() {
    assertThat(ModbusDetails.parse("addresses: [10.0.0.1\n").errors())
        .singleElement()
        .asString()
        .startsWith("discoveryDetails: ")
        .endsWith("(line 2, column 1: expected ',' or ']', but got <stream end>)");
  }

  static Identity identity(String vendor, String product, String revision) {
    return new Identity("h", 502, 1, 0x81, java.util.Map.of(0, vendor, 1, product, 2, revision));
  }
}
