package io.jakri.handler.opcua;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.opcua.Application.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ServerSelectionTest {

  private static final OpcTcpUrl LDS = OpcTcpUrl.parse("opc.tcp://10.1.2.3:4840/").url().get();
  private static final HostResolver RESOLVES_EXCEPT_INVALID = host -> !host.endsWith(".invalid");

  private static List<String> select(List<Application> answer, ApplicationNameFilter filter) {
    return ServerSelection.select(LDS, answer, filter, RESOLVES_EXCEPT_INVALID, 1024, 64)
        .servers()
        .stream()
        .map(OpcTcpUrl::text)
        .toList();
  }

  private static Application server(String name, String... urls) {
    return new Application(name, Type.SERVER, List.of(urls));
  }

  @Test
  void onlyServersAreDevicesNeverTheDiscoveryServerOrClients() {
    List<Application> answer =
        List.of(
            new Application("LDS", Type.DISCOVERY_SERVER, List.of("opc.tcp://10.1.2.3:4840/")),
            new Application("client", Type.CLIENT, List.of("opc.tcp://10.1.2.4:1/")),
            new Application("both", Type.CLIENT_AND_SERVER, List.of("opc.tcp://10.1.2.5:1/")),
            server("plc", "opc.tcp://10.1.2.6:4840/"));

    assertThat(select(answer, ApplicationNameFilter.NONE))
        .containsExactly("opc.tcp://10.1.2.6:4840/");
  }

  @Test
  void firstOpcTcpUrlIsTakenAsSentAndServersWithoutOneAreSkipped() {
    List<Application> answer =
        List.of(
            server("a", "http://10.0.0.1/", "opc.tcp://10.0.0.1:4841/A", "opc.tcp://10.0.0.1:2/"),
            server("b", "opc.https://10.0.0.2/"),
            server("c"));

    ServerSelection selection =
        ServerSelection.select(LDS, answer, ApplicationNameFilter.NONE, h -> true, 1024, 64);

    assertThat(selection.servers())
        .map(OpcTcpUrl::text)
        .containsExactly("opc.tcp://10.0.0.1:4841/A");
    assertThat(selection.unusable()).isEqualTo(2);
    assertThat(selection.examples())
        .containsExactly("\"b\": no opc.tcp discovery URL", "\"c\": no opc.tcp discovery URL");
  }

  @Test
  void unresolvableHostIsReplacedByTheDiscoveryServersHostKeepingPortAndPath() {
    assertThat(
            select(
                List.of(server("sim", "opc.tcp://OPCTest.invalid:50000/OPCUA/Simulation")),
                ApplicationNameFilter.NONE))
        .containsExactly("opc.tcp://10.1.2.3:50000/OPCUA/Simulation");
  }

  @Test
  void nameFilterMatchesExactly() {
    List<Application> answer =
        List.of(server("Boiler", "opc.tcp://h1:1/"), server("boiler", "opc.tcp://h2:1/"));
    ApplicationNameFilter include =
        new ApplicationNameFilter(ApplicationNameFilter.Action.INCLUDE, List.of("Boiler"));
    ApplicationNameFilter exclude =
        new ApplicationNameFilter(ApplicationNameFilter.Action.EXCLUDE, List.of("Boiler"));
    ApplicationNameFilter includeNothing =
        new ApplicationNameFilter(ApplicationNameFilter.Action.INCLUDE, List.of());

    assertThat(select(answer, include)).containsExactly("opc.tcp://h1:1/");
    assertThat(select(answer, exclude)).containsExactly("opc.tcp://h2:1/");
    assertThat(select(answer, includeNothing)).isEmpty();
  }

  @Test
  void repeatedUrlsCountOnce() {
    assertThat(
            select(
                List.of(server("a", "opc.tcp://h:1/"), server("b", "opc.tcp://h:1/")),
                ApplicationNameFilter.NONE))
        .containsExactly("opc.tcp://h:1/");
  }

  @Test
  void hostileAnswerIsBoundedInServersAndLookups() {
    List<Application> answer = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) {
      answer.add(
          server("\u0000x" + i, "opc.tcp://host" + (i % 100) + ".example:" + (1000 + i) + "/"));
    }
    Set<String> looked = new java.util.HashSet<>();

    ServerSelection selection =
        ServerSelection.select(
            LDS,
            answer,
            ApplicationNameFilter.NONE,
            host -> {
              looked.add(host);
              return true;
            },
            1024,
            64);

    assertThat(selection.servers()).hasSize(1024);
    assertThat(looked).hasSize(64);
    assertThat(selection.unusable()).isEqualTo(10_000 - 1024);
    assertThat(selection.examples())
        .allMatch(e -> !e.contains("\u0000") && e.startsWith("\"\\u0000x"));
  }
}
