package io.jakri.handler.opcua;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class OpcTcpUrlTest {

  private static OpcTcpUrl ok(String text) {
    return OpcTcpUrl.parse(text).url().orElseThrow(() -> new AssertionError(text));
  }

  private static String problem(String text) {
    OpcTcpUrl.Result result = OpcTcpUrl.parse(text);
    assertThat(result.url()).as(text).isEmpty();
    return result.problem();
  }

  @Test
  void partsOfUsualUrls() {
    OpcTcpUrl url = ok("opc.tcp://plc-1.factory.example:4840/UA/Server?x=1");
    assertThat(url.host()).isEqualTo("plc-1.factory.example");
    assertThat(url.port()).isEqualTo(OptionalInt.of(4840));
    assertThat(url.rest()).isEqualTo("/UA/Server?x=1");

    assertThat(ok("OPC.TCP://10.0.0.1").portOrDefault()).isEqualTo(4840);
    assertThat(ok("opc.tcp://[fe80::1%eth0]:48010").host()).isEqualTo("fe80::1%eth0");
  }

  @Test
  void withHostKeepsPortAndPath() {
    assertThat(ok("opc.tcp://nowhere.invalid:53530/OPCUA/Sim").withHost("192.168.0.1").text())
        .isEqualTo("opc.tcp://192.168.0.1:53530/OPCUA/Sim");
    assertThat(ok("opc.tcp://nowhere.invalid/").withHost("::1").text())
        .isEqualTo("opc.tcp://[::1]/");
  }

  @Test
  void unusableUrlsSayWhy() {
    assertThat(problem("")).isEqualTo("it is empty");
    assertThat(problem("opc.udp://x:1/")).isEqualTo("it does not start with opc.tcp://");
    assertThat(problem("opc.tcp://x:65536/"))
        .isEqualTo("its port must be between 1 and 65535 but is 65536");
    assertThat(problem("opc.tcp://x:99999999999/"))
        .isEqualTo("its port \"99999999999\" is not a number");
    assertThat(problem("opc.tcp://x:/")).isEqualTo("its port \"\" is not a number");
    assertThat(problem("opc.tcp://user@x:1/")).isEqualTo("it carries user information (user@host)");
    assertThat(problem("opc.tcp://[::1/")).isEqualTo("its IPv6 host has no closing ]");
    assertThat(problem("opc.tcp://x\u0007:1/"))
        .isEqualTo("it holds spaces, control or non-ASCII characters");
    assertThat(problem("opc.tcp://bad_host!:1/"))
        .isEqualTo("its host \"bad_host!\" is not a host name");
    assertThat(problem("opc.tcp://x:1/" + "y".repeat(1100)))
        .isEqualTo("it is longer than 1024 characters (1114)");
  }
}
