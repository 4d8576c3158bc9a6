package io.jakri.agent.events;

import io.jakri.agent.allocation.SlotConflict;
import io.jakri.agent.deviceplugin.DevicePluginReport;
import io.jakri.agent.discovery.DeviceChange;
import io.jakri.agent.discovery.DiscoveryReport;
import io.jakri.agent.discovery.PluginHandlerRegistry;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's one report stream: everything its parts report that metrics, operator Events and
 * tests react to. Each part emits its own values to a sink of its own type (so no part depends on
 * this package, and the packages stay free of cycles); the composition root wraps them into an
 * {@code AgentReport} and hands each to one consumer it composes (metrics first, then Events).
 * Consumers match on the cases with {@code instanceof}; none may block.
 */
public sealed interface AgentReport {

  /**
   * From the device-plugin side: registered, registration failed, kubelet restarted, retired,
   * allocated, advertised.
   */
  record DevicePlugin(DevicePluginReport report) implements AgentReport {
    public DevicePlugin {
      Objects.requireNonNull(report, "report");
    }
  }

  /** From slot claims: a lost write or a slot held elsewhere. */
  record Claim(SlotConflict conflict) implements AgentReport {
    public Claim {
      Objects.requireNonNull(conflict, "conflict");
    }
  }

  /**
   * From discovery: a snapshot processed, a handler started or failed, a refusal, a Configuration's
   * first results or changed status. Emitted on the discovery thread.
   */
  record Discovery(DiscoveryReport report) implements AgentReport {
    public Discovery {
      Objects.requireNonNull(report, "report");
    }
  }

  /**
   * A device's state on this node changed (a snapshot, or the offline grace ending), after the
   * Instance store and the node's resources took it; {@code reportedNanos} is the {@code nanoTime}
   * reading taken when the handler reported the snapshot behind it. Emitted on the discovery
   * thread.
   */
  record DeviceChanged(DeviceChange change, long reportedNanos) implements AgentReport {
    public DeviceChanged {
      Objects.requireNonNull(change, "change");
    }
  }

  /** A plugin jar (or the plugins directory) could not be used. */
  record PluginLoadFailed(PluginHandlerRegistry.LoadProblem problem) implements AgentReport {
    public PluginLoadFailed {
      Objects.requireNonNull(problem, "problem");
    }
  }

  /**
   * One consumer handing each report to {@code consumers} in order; one consumer's failure is
   * logged and stays its own (the others still get the report).
   */
  @SafeVarargs
  static Consumer<AgentReport> inOrder(Consumer<? super AgentReport>... consumers) {
    List<Consumer<? super AgentReport>> all = List.of(consumers);
    Logger log = LoggerFactory.getLogger(AgentReport.class);
    return report -> {
      for (Consumer<? super AgentReport> c : all) {
        try {
          c.accept(report);
        } catch (RuntimeException e) {
          log.warn("report consumer failed on {}: {}", report, e.toString());
        }
      }
    };
  }
}
