package io.jakri.agent.discovery;

import io.jakri.agent.discovery.DiscoveryManager.ConfigurationStatus;
import io.jakri.agent.discovery.DiscoveryManager.State;
import io.jakri.logging.LogText;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The status of each Configuration the discovery runs, for status reporting: logs a Configuration's
 * state and message when they change (INFO while discovering, ERROR otherwise) and tells {@code
 * changed} whenever a status (or its device count) changed or went away. A missing handler is
 * logged once per episode (until the state changes): its message follows the node's installed
 * handlers, so a flood of registrations would otherwise log a line each; those changes go to DEBUG
 * and their count comes with the line that ends the episode. Another problem with a new message is
 * a new problem and is logged. Lines are at most {@link LogText#MAX_LINE} characters. Written on
 * the discovery thread only; {@link #all} may be called from any thread.
 */
final class ConfigurationStatuses {

  // Logged as the discovery's own lines (operators grep for them, docs name the logger).
  private static final Logger LOG = LoggerFactory.getLogger(DiscoveryManager.class);

  private final Map<String, ConfigurationStatus> statuses = new ConcurrentHashMap<>();
  // Messages of the current handler-missing episode logged at DEBUG only, by Configuration.
  // Discovery thread only.
  private final Map<String, Integer> unlogged = new HashMap<>();
  private final Consumer<String> changed;

  /**
   * @param changed told the Configuration (on the discovery thread) after its status changed; must
   *     not block
   */
  ConfigurationStatuses(Consumer<String> changed) {
    this.changed = changed;
  }

  /** The status of every known Configuration. Any thread. */
  Map<String, ConfigurationStatus> all() {
    return Map.copyOf(statuses);
  }

  /** The message of {@code configuration}'s status, or {@code ""} while it has none. */
  String message(String configuration) {
    ConfigurationStatus status = statuses.get(configuration);
    return status == null ? "" : status.message();
  }

  /**
   * Sets {@code configuration}'s status; logs a new state or message, tells {@code changed} when
   * anything (the device count too) differs from before.
   */
  void set(String configuration, State state, String message, int devices) {
    ConfigurationStatus previous = statuses.get(configuration);
    if (previous == null || previous.state() != state || !previous.message().equals(message)) {
      log(configuration, previous, state, message);
    }
    ConfigurationStatus next = new ConfigurationStatus(state, message, devices);
    if (!next.equals(statuses.put(configuration, next))) {
      changed.accept(configuration);
    }
  }

  private void log(
      String configuration, ConfigurationStatus previous, State state, String message) {
    boolean sameEpisode =
        previous != null && previous.state() == state && state == State.HANDLER_MISSING;
    if (sameEpisode) {
      unlogged.merge(configuration, 1, Integer::sum);
      LOG.debug("configuration {}: {}", configuration, message);
      return;
    }
    Integer changes = unlogged.remove(configuration);
    String line =
        "configuration "
            + configuration
            + ": "
            + message
            + (changes == null
                ? ""
                : " (the "
                    + previous.state()
                    + " message before changed "
                    + changes
                    + (changes == 1 ? " more time" : " more times")
                    + ", logged at DEBUG)");
    // Escaped first, so the bound holds for the line as written.
    String bounded = LogText.bounded(LogText.escape(line), LogText.MAX_LINE);
    if (state == State.DISCOVERING) {
      LOG.info("{}", bounded);
    } else {
      LOG.error("{}", bounded);
    }
  }

  /** Forgets {@code configuration} (removed); tells {@code changed}. */
  void remove(String configuration) {
    unlogged.remove(configuration);
    statuses.remove(configuration);
    changed.accept(configuration);
  }
}
