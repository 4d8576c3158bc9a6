package io.jakri.agent.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.jakri.agent.LogCapture;
import io.jakri.agent.discovery.DiscoveryManager.ConfigurationStatus;
import io.jakri.agent.discovery.DiscoveryManager.State;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link ConfigurationStatuses} on its own: what is logged and when a change is told. */
class ConfigurationStatusesTest {

  private final List<String> told = new ArrayList<>();
  private final ConfigurationStatuses statuses = new ConfigurationStatuses(told::add);

  @Test
  void aNewStateOrMessageIsLoggedAndEveryDifferenceIsTold() {
    try (LogCapture logs = LogCapture.of(DiscoveryManager.class)) {
      statuses.set("cams", State.DISCOVERING, "discovering with handler fake", 0);
      assertThat(told).containsExactly("cams");
      // The same status again: neither logged nor told.
      statuses.set("cams", State.DISCOVERING, "discovering with handler fake", 0);
      assertThat(told).containsExactly("cams");
      // Only the device count differs: told, not logged.
      statuses.set("cams", State.DISCOVERING, "discovering with handler fake", 3);
      assertThat(told).containsExactly("cams", "cams");
      statuses.set("cams", State.FAILED, "handler fake failed", 3);
      assertThat(told).containsExactly("cams", "cams", "cams");

      assertThat(logs.events())
          .extracting(ILoggingEvent::getLevel, ILoggingEvent::getFormattedMessage)
          .containsExactly(
              org.assertj.core.groups.Tuple.tuple(
                  Level.INFO, "configuration cams: discovering with handler fake"),
              org.assertj.core.groups.Tuple.tuple(
                  Level.ERROR, "configuration cams: handler fake failed"));
    }
    assertThat(statuses.all())
        .containsExactly(
            java.util.Map.entry(
                "cams", new ConfigurationStatus(State.FAILED, "handler fake failed", 3)));
    assertThat(statuses.message("cams")).isEqualTo("handler fake failed");
  }

  /**
   * 238 handler registrations changed a waiting Configuration's message 238 times: one ERROR line
   * for the episode, the changes at DEBUG, their count with the line that ends it; no line over the
   * bound, however long the message.
   */
  @Test
  void aMissingHandlerWhoseMessageKeepsChangingIsLoggedOncePerEpisodeWithACount() {
    try (LogCapture logs = LogCapture.of(DiscoveryManager.class.getName(), Level.INFO)) {
      List<String> installed = new ArrayList<>();
      for (int i = 0; i < 238; i++) {
        installed.add("external-handler-" + i);
        statuses.set(
            "cams",
            State.HANDLER_MISSING,
            "discovery handler \"fake\" is not installed (installed: " + installed + ")",
            0);
      }
      statuses.set("cams", State.DISCOVERING, "discovering with handler fake", 0);

      assertThat(logs.events())
          .extracting(ILoggingEvent::getLevel)
          .containsExactly(Level.ERROR, Level.INFO);
      assertThat(logs.messages().get(0))
          .startsWith(
              "configuration cams: discovery handler \"fake\" is not installed (installed:"
                  + " [external-handler-0])");
      assertThat(logs.messages().get(1))
          .isEqualTo(
              "configuration cams: discovering with handler fake (the HANDLER_MISSING message"
                  + " before changed 237 more times, logged at DEBUG)");
      assertThat(logs.events()).allMatch(e -> e.getThrowableProxy() == null);
    }
    // Another problem, and a new message of it, is logged each time, its line bounded.
    try (LogCapture logs = LogCapture.of(DiscoveryManager.class)) {
      statuses.set("cams", State.FAILED, "handler fake failed: " + "x".repeat(3_000), 0);
      statuses.set("cams", State.FAILED, "handler fake failed: bus lost", 0);
      assertThat(logs.messages()).hasSize(2);
      assertThat(logs.messages().get(0))
          .hasSizeLessThanOrEqualTo(io.jakri.logging.LogText.MAX_LINE)
          .startsWith("configuration cams: handler fake failed: xxx")
          .endsWith("... (3041 characters)");
      assertThat(logs.messages().get(1))
          .isEqualTo("configuration cams: handler fake failed: bus lost");
    }
  }

  @Test
  void aRemovedConfigurationIsForgottenAndTold() {
    statuses.set("cams", State.INVALID, "refused", 0);
    statuses.remove("cams");
    assertThat(told).containsExactly("cams", "cams");
    assertThat(statuses.all()).isEmpty();
    assertThat(statuses.message("cams")).isEmpty();
  }

  @Test
  void theMapHandedOutIsACopy() {
    statuses.set("cams", State.DISCOVERING, "on", 1);
    var copy = statuses.all();
    statuses.set("mics", State.DISCOVERING, "on", 1);
    assertThat(copy).containsOnlyKeys("cams");
    assertThat(statuses.all()).containsOnlyKeys("cams", "mics");
  }
}
