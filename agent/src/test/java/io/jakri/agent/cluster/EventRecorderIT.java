package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.jakri.crd.Configuration;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.Test;

/**
 * {@link EventRecorder} against fabric8's mock API server in CRUD mode (one server per test).
 *
 * <p>Mock on purpose: one fresh server per test for the recorder alone; Events on the real server
 * with the agent's RBAC are in ClusterRbacIT and ClusterEventsIT.
 */
@EnableKubernetesMockClient(crud = true, https = false)
class EventRecorderIT {

  private static final String NODE = "worker-1";
  private static final ObjectRef CONFIG = ObjectRef.configuration("devices", "echo", "uid-1");
  private static final Instant START = Instant.parse("2026-03-01T10:00:00.123456789Z");

  KubernetesClient client;
  private final SettableClock clock = new SettableClock(START);

  @Test
  void theFirstOccurrenceCreatesAnEventAboutTheObject() {
    recorder().warning(CONFIG, "PropertyUnresolvable", "discoveryProperties TOKEN: missing");

    List<Event> events = events("devices");
    assertThat(events).hasSize(1);
    Event event = events.get(0);
    assertThat(event.getMetadata().getName()).startsWith("echo.");
    assertThat(event.getInvolvedObject().getApiVersion()).isEqualTo("akri.sh/v0");
    assertThat(event.getInvolvedObject().getKind()).isEqualTo("Configuration");
    assertThat(event.getInvolvedObject().getNamespace()).isEqualTo("devices");
    assertThat(event.getInvolvedObject().getName()).isEqualTo("echo");
    assertThat(event.getInvolvedObject().getUid()).isEqualTo("uid-1");
    assertThat(event.getType()).isEqualTo("Warning");
    assertThat(event.getReason()).isEqualTo("PropertyUnresolvable");
    assertThat(event.getMessage()).isEqualTo("discoveryProperties TOKEN: missing");
    assertThat(event.getCount()).isEqualTo(1);
    assertThat(event.getFirstTimestamp()).isEqualTo("2026-03-01T10:00:00Z");
    assertThat(event.getLastTimestamp()).isEqualTo("2026-03-01T10:00:00Z");
    assertThat(event.getSource().getComponent()).isEqualTo("jakri-agent");
    assertThat(event.getSource().getHost()).isEqualTo(NODE);
    assertThat(event.getReportingComponent()).isEqualTo("jakri-agent");
    assertThat(event.getReportingInstance()).isEqualTo(NODE);
  }

  @Test
  void aRepeatWithinTheWindowIncrementsCountAndLastTimestamp() {
    EventRecorder recorder = recorder();
    recorder.normal(CONFIG, "DiscoveryStarted", "handler simulated started");
    clock.advance(Duration.ofSeconds(30));
    recorder.normal(CONFIG, "DiscoveryStarted", "handler simulated started");
    clock.advance(Duration.ofSeconds(30));
    recorder.normal(CONFIG, "DiscoveryStarted", "handler simulated started");

    List<Event> events = events("devices");
    assertThat(events).hasSize(1);
    assertThat(events.get(0).getType()).isEqualTo("Normal");
    assertThat(events.get(0).getCount()).isEqualTo(3);
    assertThat(events.get(0).getFirstTimestamp()).isEqualTo("2026-03-01T10:00:00Z");
    assertThat(events.get(0).getLastTimestamp()).isEqualTo("2026-03-01T10:01:00Z");
  }

  @Test
  void aDifferentReasonMessageTypeOrObjectMakesANewEvent() {
    EventRecorder recorder = recorder();
    recorder.warning(CONFIG, "HandlerMissing", "no handler zeroconf");
    recorder.warning(CONFIG, "HandlerFailed", "no handler zeroconf");
    recorder.warning(CONFIG, "HandlerFailed", "handler zeroconf threw");
    recorder.normal(CONFIG, "HandlerFailed", "handler zeroconf threw");
    recorder.warning(
        ObjectRef.instance("devices", "echo-8120fe", "uid-2"), "HandlerFailed", "no handler");

    List<Event> events = events("devices");
    assertThat(events).hasSize(5).allSatisfy(e -> assertThat(e.getCount()).isEqualTo(1));
    assertThat(events).extracting(e -> e.getMetadata().getName()).doesNotHaveDuplicates();
  }

  @Test
  void aRepeatAfterTheWindowMakesANewEvent() {
    EventRecorder recorder =
        new EventRecorder(client, NODE, Runnable::run, clock, Duration.ofMinutes(1), 10);
    recorder.warning(CONFIG, "Flapping", "device went away");
    clock.advance(Duration.ofMinutes(2));
    recorder.warning(CONFIG, "Flapping", "device went away");

    assertThat(events("devices")).hasSize(2);
  }

  @Test
  void aRepeatAfterTheEventExpiredOnTheServerMakesANewEvent() {
    EventRecorder recorder = recorder();
    recorder.warning(CONFIG, "Flapping", "device went away");
    client.v1().events().inNamespace("devices").delete();
    recorder.warning(CONFIG, "Flapping", "device went away");

    List<Event> events = events("devices");
    assertThat(events).hasSize(1);
    assertThat(events.get(0).getCount()).isEqualTo(1);
  }

  @Test
  void onlyTheMostRecentlyUsedOccurrencesAreRemembered() {
    EventRecorder recorder =
        new EventRecorder(client, NODE, Runnable::run, clock, Duration.ofHours(1), 2);
    recorder.warning(CONFIG, "A", "a");
    recorder.warning(CONFIG, "B", "b");
    recorder.warning(CONFIG, "A", "a"); // A is now the most recent: B is next to go
    recorder.warning(CONFIG, "C", "c"); // forgets B
    recorder.warning(CONFIG, "A", "a"); // still remembered
    recorder.warning(CONFIG, "B", "b"); // forgotten: a second Event for B

    List<Event> events = events("devices");
    assertThat(events)
        .filteredOn(e -> e.getReason().equals("A"))
        .singleElement()
        .satisfies(e -> assertThat(e.getCount()).isEqualTo(3));
    assertThat(events).filteredOn(e -> e.getReason().equals("B")).hasSize(2);
    assertThat(events).filteredOn(e -> e.getReason().equals("C")).hasSize(1);
  }

  @Test
  void eventsAboutClusterScopedObjectsGoToTheDefaultNamespace() {
    recorder().warning(ObjectRef.node(NODE, "node-uid"), "StaleCapacity", "removed akri.sh/x");

    List<Event> events = events("default");
    assertThat(events).hasSize(1);
    assertThat(events.get(0).getInvolvedObject().getKind()).isEqualTo("Node");
    assertThat(events.get(0).getInvolvedObject().getNamespace()).isNull();
  }

  @Test
  void aReferenceTakenFromAResourceNamesItsKindAndUid() {
    Configuration configuration = new Configuration();
    configuration.setMetadata(
        new ObjectMetaBuilder().withName("echo").withNamespace("devices").withUid("u-9").build());

    ObjectRef ref = ObjectRef.of(configuration);

    assertThat(ref).isEqualTo(ObjectRef.configuration("devices", "echo", "u-9"));
  }

  @Test
  void longMessagesAndReasonsAreCut() {
    recorder().warning(CONFIG, "R".repeat(500), "m".repeat(5_000));

    Event event = events("devices").get(0);
    assertThat(event.getReason()).hasSize(EventRecorder.MAX_REASON).endsWith("...");
    assertThat(event.getMessage()).hasSize(EventRecorder.MAX_MESSAGE).endsWith("...");
  }

  @Test
  void failuresAreNeverThrown() {
    KubernetesClient closed =
        new KubernetesClientBuilder().withConfig(client.getConfiguration()).build();
    closed.close();
    EventRecorder recorder = new EventRecorder(closed, NODE, Runnable::run, clock);

    assertThatCode(() -> recorder.warning(CONFIG, "Lost", "api gone")).doesNotThrowAnyException();
    EventRecorder rejecting =
        new EventRecorder(
            client,
            NODE,
            task -> {
              throw new RejectedExecutionException("shut down");
            },
            clock);
    assertThatCode(() -> rejecting.normal(CONFIG, "Late", "after shutdown"))
        .doesNotThrowAnyException();
    assertThat(events("devices")).isEmpty();
  }

  @Test
  void writesRunOnTheInjectedExecutor() {
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try {
      EventRecorder recorder = new EventRecorder(client, NODE, executor, clock);
      recorder.normal(CONFIG, "Async", "one");
      recorder.normal(CONFIG, "Async", "one");

      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () ->
                  assertThat(events("devices"))
                      .singleElement()
                      .satisfies(e -> assertThat(e.getCount()).isEqualTo(2)));
    } finally {
      executor.shutdownNow();
    }
  }

  private EventRecorder recorder() {
    return new EventRecorder(client, NODE, Runnable::run, clock);
  }

  private List<Event> events(String namespace) {
    return client.v1().events().inNamespace(namespace).list().getItems();
  }

  /** A clock the test moves by hand. */
  private static final class SettableClock extends Clock {
    private volatile Instant now;

    SettableClock(Instant start) {
      this.now = start;
    }

    void advance(Duration by) {
      now = now.plus(by);
    }

    @Override
    public Instant instant() {
      return now;
    }

    @Override
    public java.time.ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }
  }
}
