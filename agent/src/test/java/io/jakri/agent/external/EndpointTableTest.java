package io.jakri.agent.external;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class EndpointTableTest {

  static final ExternalEndpoint A1 = network("a", 1, false);
  static final ExternalEndpoint A2 = network("a", 2, false);
  static final ExternalEndpoint B1 = network("b", 1, false);

  final List<ManagedChannel> opened = new ArrayList<>();
  final EndpointTable table = new EndpointTable(2, name -> new ExternalHandler(name, null));

  static ExternalEndpoint network(String name, int port, boolean shared) {
    return new ExternalEndpoint(
        name, "http://127.0.0.1:" + port, ExternalEndpoint.Type.NETWORK, shared);
  }

  /** A channel nothing dials (gRPC connects on the first call only). */
  ManagedChannel open() {
    ManagedChannel channel = NettyChannelBuilder.forTarget("127.0.0.1:1").usePlaintext().build();
    opened.add(channel);
    return channel;
  }

  @AfterEach
  void tearDown() {
    opened.forEach(ManagedChannel::shutdownNow);
  }

  static final class Listener implements ExternalHandlers.EndpointListener {
    final List<String> seen = new ArrayList<>();

    @Override
    public void registered(ExternalEndpoint endpoint, boolean again) {
      seen.add("registered " + endpoint.key() + (again ? " again" : ""));
    }

    @Override
    public void dropped(ExternalEndpoint endpoint) {
      seen.add("dropped " + endpoint.key());
    }
  }

  @Test
  void aNewNameGetsAHandlerAndTheSameEndpointAgainIsARegistrationAgain() {
    EndpointTable.Registration first = table.register(A1).orElseThrow();
    assertThat(first.newName()).isTrue();
    assertThat(first.again()).isFalse();
    assertThat(first.replaced()).isNull();
    assertThat(table.handler("a")).get().extracting(ExternalHandler::name).isEqualTo("a");

    EndpointTable.Registration again = table.register(A1).orElseThrow();
    assertThat(again.newName()).isFalse();
    assertThat(again.again()).isTrue();
    assertThat(table.all()).containsExactly(A1);
  }

  @Test
  void anEndpointOfTheSameKeyWithOtherContentReplacesTheOldOneAndHandsBackItsChannel() {
    table.register(A1);
    ManagedChannel channel = table.channel(A1, this::open).orElseThrow();
    ExternalEndpoint shared = network("a", 1, true);

    EndpointTable.Registration r = table.register(shared).orElseThrow();

    assertThat(r.again()).isFalse();
    assertThat(r.replaced()).isEqualTo(A1);
    assertThat(r.oldChannel()).isSameAs(channel);
    assertThat(table.all()).containsExactly(shared);
    assertThat(table.channel(A1, this::open)).isEmpty();
  }

  @Test
  void beyondTheLimitNewEndpointsAreRefusedButRegisteredOnesMayRegisterAgain() {
    assertThat(table.register(A1)).isPresent();
    assertThat(table.register(B1)).isPresent();
    assertThat(table.register(A2)).isEmpty();
    assertThat(table.register(network("c", 1, false))).isEmpty();
    assertThat(table.names()).containsExactly("a", "b");
    assertThat(table.register(A1))
        .get()
        .extracting(EndpointTable.Registration::again)
        .isEqualTo(true);
    assertThat(table.size()).isEqualTo(2);
  }

  @Test
  void subscribersOfANameAreHandedToItsLaterChangesUntilTheyUnsubscribe() {
    table.register(A1);
    Listener listener = new Listener();
    assertThat(table.subscribe("a", listener)).containsExactly(A1);
    assertThat(table.subscribe("nobody", new Listener())).isEmpty();

    assertThat(table.register(A2).orElseThrow().subscribers()).containsExactly(listener);
    assertThat(table.drop(A2).orElseThrow().subscribers()).containsExactly(listener);
    assertThat(table.register(B1).orElseThrow().subscribers()).isEmpty();
    table.drop(B1);

    table.unsubscribe("a", listener);
    assertThat(table.register(A2).orElseThrow().subscribers()).isEmpty();
  }

  @Test
  void droppingTheLastEndpointOfANameRemovesTheName() {
    table.register(A1);
    table.register(A2);
    ManagedChannel channel = table.channel(A2, this::open).orElseThrow();
    assertThat(table.drop(network("a", 1, true))).as("another endpoint of that key").isEmpty();

    EndpointTable.Removal first = table.drop(A2).orElseThrow();
    assertThat(first.nameGone()).isFalse();
    assertThat(first.channel()).isSameAs(channel);
    EndpointTable.Removal last = table.drop(A1).orElseThrow();
    assertThat(last.nameGone()).isTrue();
    assertThat(last.channel()).isNull();

    assertThat(table.names()).isEmpty();
    assertThat(table.handler("a")).isEmpty();
    assertThat(table.drop(A1)).isEmpty();
  }

  @Test
  void aChannelIsMadeOnceOnFirstUse() {
    table.register(A1);
    table.register(B1);
    ManagedChannel channel = table.channel(A1, this::open).orElseThrow();
    assertThat(table.channel(A1, this::open)).containsSame(channel);
    assertThat(opened).hasSize(1);
    assertThat(table.channels()).containsExactly(channel);
    assertThat(table.channel(A2, this::open)).isEmpty();
    assertThat(opened).hasSize(1);
  }
}
