package io.jakri.agent.external;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import v0.Discovery.RegisterDiscoveryHandlerRequest;
import v0.Discovery.RegisterDiscoveryHandlerRequest.EndpointType;

class ExternalEndpointTest {

  @TempDir Path dir;

  private ExternalEndpoint.Checked check(String name, String endpoint, EndpointType type) {
    return ExternalEndpoint.check(
        RegisterDiscoveryHandlerRequest.newBuilder()
            .setName(name)
            .setEndpoint(endpoint)
            .setEndpointType(type)
            .build(),
        dir,
        true);
  }

  private static String refused(ExternalEndpoint.Checked checked) {
    assertThat(checked).isInstanceOf(ExternalEndpoint.Refused.class);
    return ((ExternalEndpoint.Refused) checked).reason();
  }

  @Test
  void aSocketInsideTheDirectoryIsAccepted() throws Exception {
    Path socket = dir.resolve("udev.sock");
    try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      server.bind(UnixDomainSocketAddress.of(socket));
      ExternalEndpoint.Checked checked = check("udev", socket.toString(), EndpointType.UDS);
      assertThat(checked)
          .isEqualTo(
              new ExternalEndpoint.Accepted(
                  new ExternalEndpoint(
                      "udev", socket.toString(), ExternalEndpoint.Type.UDS, false)));
    }
  }

  @Test
  void namesMustBeHandlerNames() {
    assertThat(refused(check("", "http://1.2.3.4:80", EndpointType.NETWORK)))
        .isEqualTo("name is empty");
    assertThat(refused(check("bad name", "http://1.2.3.4:80", EndpointType.NETWORK)))
        .startsWith("name \"bad name\" is not a handler name");
    assertThat(refused(check("x".repeat(64), "http://1.2.3.4:80", EndpointType.NETWORK)))
        .contains("at most 63 characters");
    assertThat(refused(check("-lead", "http://1.2.3.4:80", EndpointType.NETWORK)))
        .contains("is not a handler name");
  }

  @Test
  void udsEndpointsMustBeSocketsInsideTheDirectory() throws Exception {
    assertThat(refused(check("udev", "/etc/passwd", EndpointType.UDS)))
        .contains("not a socket path inside the discovery-handlers directory");
    assertThat(refused(check("udev", dir.resolve("../x.sock").toString(), EndpointType.UDS)))
        .contains("not a socket path inside");
    assertThat(refused(check("udev", "relative.sock", EndpointType.UDS)))
        .contains("not a socket path inside");
    assertThat(refused(check("udev", dir.toString(), EndpointType.UDS)))
        .contains("not a socket path inside");
    Path file = Files.writeString(dir.resolve("file.sock"), "x");
    assertThat(refused(check("udev", file.toString(), EndpointType.UDS)))
        .isEqualTo("endpoint " + file + " is not a Unix socket");
    assertThat(refused(check("udev", dir.resolve("missing.sock").toString(), EndpointType.UDS)))
        .endsWith("does not exist");
  }

  @Test
  void networkEndpointsMustBeHttpHostPort() {
    assertThat(check("onvif", "http://10.0.0.7:10000", EndpointType.NETWORK))
        .isInstanceOf(ExternalEndpoint.Accepted.class);
    assertThat(check("onvif", "http://[fd00::7]:10000", EndpointType.NETWORK))
        .isInstanceOf(ExternalEndpoint.Accepted.class);
    for (String bad :
        new String[] {
          "10.0.0.7:10000",
          "https://10.0.0.7:10000",
          "http://10.0.0.7",
          "http://10.0.0.7:0",
          "http://10.0.0.7:70000",
          "http://u@10.0.0.7:1",
          "http://10.0.0.7:1/path",
          "http://10.0.0.7:1?q",
          "ftp://x:1"
        }) {
      assertThat(refused(check("onvif", bad, EndpointType.NETWORK)))
          .as(bad)
          .endsWith("is not http://host:port");
    }
  }

  @Test
  void unknownEndpointTypesAndHugeEndpointsAreRefused() {
    RegisterDiscoveryHandlerRequest unknown =
        RegisterDiscoveryHandlerRequest.newBuilder()
            .setName("x")
            .setEndpoint("http://a:1")
            .setEndpointTypeValue(7)
            .build();
    assertThat(refused(ExternalEndpoint.check(unknown, dir, true)))
        .isEqualTo("endpoint_type 7 is neither UDS nor NETWORK");
    assertThat(refused(check("x", "http://" + "a".repeat(2000) + ":1", EndpointType.NETWORK)))
        .startsWith("endpoint is longer than");
  }

  @Test
  void anAbstractNamespaceEndpointIsRefusedForWhatItIsNotForItsLength() {
    // 35 characters: a NUL, as Linux's abstract-namespace sockets start, then a name.
    String abstractSocket = "\0" + "akri-handler-abstract-namespace-01";
    assertThat(abstractSocket).hasSize(35);
    String reason = refused(check("x", abstractSocket, EndpointType.UDS));
    assertThat(reason)
        .doesNotContain("longer than")
        .isEqualTo(
            "endpoint \"?akri-handler-abstract-namespace-01\" contains a NUL character (an"
                + " abstract-namespace socket?); it must be a socket path inside the"
                + " discovery-handlers directory");
    assertThat(refused(check("x", "http://a:1\0", EndpointType.NETWORK)))
        .contains("contains a NUL character");
  }

  @Test
  void theEndpointRoundTripsThroughAkrisRequest() {
    ExternalEndpoint e =
        new ExternalEndpoint("onvif", "http://10.0.0.7:10000", ExternalEndpoint.Type.NETWORK, true);
    assertThat(ExternalEndpoint.check(e.toRequest(), dir, false))
        .isEqualTo(new ExternalEndpoint.Accepted(e));
    assertThat(e.host()).isEqualTo("10.0.0.7");
    assertThat(e.port()).isEqualTo(10000);
    assertThat(e.key()).isEqualTo("onvif@http://10.0.0.7:10000");
  }
}
