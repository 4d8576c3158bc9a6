package io.jakri.agent.events;

import io.jakri.agent.allocation.SlotConflict;
import io.jakri.agent.cluster.Events;
import io.jakri.agent.cluster.ObjectRef;
import io.jakri.agent.deviceplugin.DevicePluginReport;
import io.jakri.agent.discovery.PluginHandlerRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Raises the Warning Events an operator of this node should see, through {@link Events} (Kubernetes
 * Events in cluster mode, log lines standalone):
 *
 * <ul>
 *   <li>{@value #REGISTRATION_FAILED} on the Node: one resource's Register with the kubelet failed
 *       {@link RegistrationFailures#threshold()} times in a row (once per failure streak).
 *   <li>{@value #SLOT_CONFLICT_STORM} on the Instance: {@link ConflictStorms#threshold()} slot
 *       conflicts (lost claim writes, or claims refused because the slot is held elsewhere) within
 *       {@link ConflictStorms#window()} (at most once per window and Instance).
 *   <li>{@value #PLUGIN_LOAD_FAILED} on the Node: a plugin jar could not be loaded (once per jar
 *       version: a jar is only tried again after it changed).
 * </ul>
 *
 * <p>Node Events use the node name as the involved object's uid, as the kubelet's own do, so {@code
 * kubectl describe node} lists them next to the kubelet's. Messages are stable per cause, so the
 * recorder's correlation turns repeats into a higher {@code count} on one Event. Each reason has
 * its own {@link EventRateLimit} (default {@value #DEFAULT_BUDGET} per {@link
 * #DEFAULT_BUDGET_WINDOW}): a kubelet refusing thousands of resources, or contention on thousands
 * of Instances, raises a bounded number of API writes; the rest are logged.
 *
 * <p>Fed by the agent's report stream ({@link AgentReport}). Threading: called from the
 * device-plugin control thread, gRPC threads and the plugin loader; returns at once ({@link Events}
 * only queues the write).
 */
public final class AgentEvents implements java.util.function.Consumer<AgentReport> {

  /** Reason of the Event about a resource that cannot register with the kubelet. */
  public static final String REGISTRATION_FAILED = "RegistrationFailed";

  /** Reason of the Event about an Instance whose slots many claims fight over. */
  public static final String SLOT_CONFLICT_STORM = "SlotConflictStorm";

  /** Reason of the Event about a plugin jar that could not be loaded. */
  public static final String PLUGIN_LOAD_FAILED = "PluginLoadFailed";

  /** Default number of Events per reason within {@link #DEFAULT_BUDGET_WINDOW}. */
  public static final int DEFAULT_BUDGET = 20;

  /** Default budget window: the EventRecorder's correlation window. */
  public static final Duration DEFAULT_BUDGET_WINDOW = Duration.ofMinutes(10);

  private static final Logger LOG = LoggerFactory.getLogger(AgentEvents.class);

  private final Events events;
  private final String node;
  private final Function<String, String> instanceNamespace;
  private final Function<String, Optional<String>> instanceUid;
  private final RegistrationFailures registrations;
  private final ConflictStorms storms;
  private final EventRateLimit registrationBudget;
  private final EventRateLimit stormBudget;
  private final EventRateLimit pluginBudget;

  /** With the default thresholds, windows and budgets. */
  public AgentEvents(
      Events events,
      String node,
      String namespace,
      Function<String, Optional<String>> instanceUid,
      Clock clock) {
    this(
        events,
        node,
        namespace,
        instanceUid,
        clock,
        new RegistrationFailures(RegistrationFailures.DEFAULT_THRESHOLD),
        new ConflictStorms(
            clock, ConflictStorms.DEFAULT_THRESHOLD, ConflictStorms.DEFAULT_WINDOW, 10_000),
        DEFAULT_BUDGET,
        DEFAULT_BUDGET_WINDOW);
  }

  /**
   * @param namespace where Instances live
   * @param instanceUid the uid of an Instance, when known (Events then match it exactly)
   * @param budget Events per reason within {@code budgetWindow}
   */
  public AgentEvents(
      Events events,
      String node,
      String namespace,
      Function<String, Optional<String>> instanceUid,
      Clock clock,
      RegistrationFailures registrations,
      ConflictStorms storms,
      int budget,
      Duration budgetWindow) {
    this(
        events,
        node,
        constant(Objects.requireNonNull(namespace, "namespace")),
        instanceUid,
        clock,
        registrations,
        storms,
        budget,
        budgetWindow);
  }

  /** With the default thresholds; each Instance's namespace from {@code instanceNamespace}. */
  public AgentEvents(
      Events events,
      String node,
      Function<String, String> instanceNamespace,
      Function<String, Optional<String>> instanceUid,
      Clock clock) {
    this(
        events,
        node,
        instanceNamespace,
        instanceUid,
        clock,
        new RegistrationFailures(RegistrationFailures.DEFAULT_THRESHOLD),
        new ConflictStorms(
            clock, ConflictStorms.DEFAULT_THRESHOLD, ConflictStorms.DEFAULT_WINDOW, 10_000),
        DEFAULT_BUDGET,
        DEFAULT_BUDGET_WINDOW);
  }

  /**
   * @param instanceNamespace the namespace an Instance lives in, by its name
   */
  public AgentEvents(
      Events events,
      String node,
      Function<String, String> instanceNamespace,
      Function<String, Optional<String>> instanceUid,
      Clock clock,
      RegistrationFailures registrations,
      ConflictStorms storms,
      int budget,
      Duration budgetWindow) {
    this.events = Objects.requireNonNull(events, "events");
    this.node = Objects.requireNonNull(node, "node");
    this.instanceNamespace = Objects.requireNonNull(instanceNamespace, "instanceNamespace");
    this.instanceUid = Objects.requireNonNull(instanceUid, "instanceUid");
    this.registrations = Objects.requireNonNull(registrations, "registrations");
    this.storms = Objects.requireNonNull(storms, "storms");
    this.registrationBudget = new EventRateLimit(clock, budget, budgetWindow);
    this.stormBudget = new EventRateLimit(clock, budget, budgetWindow);
    this.pluginBudget = new EventRateLimit(clock, budget, budgetWindow);
  }

  /** Raises the Events {@code report} calls for, if any. Any thread; returns at once. */
  @Override
  public void accept(AgentReport report) {
    if (report instanceof AgentReport.DevicePlugin p) {
      devicePlugin(p.report());
    } else if (report instanceof AgentReport.Claim c) {
      if (c.conflict() instanceof SlotConflict.LostWrites w) {
        conflicted(w.instanceName(), w.conflicts());
      } else if (c.conflict() instanceof SlotConflict.HeldElsewhere h) {
        conflicted(h.instanceName(), 1);
      }
    } else if (report instanceof AgentReport.PluginLoadFailed f) {
      pluginLoadFailed(f.problem());
    }
  }

  private void devicePlugin(DevicePluginReport report) {
    if (report instanceof DevicePluginReport.Registered r) {
      registrations.succeeded(r.resource());
    } else if (report instanceof DevicePluginReport.RegistrationFailed f) {
      registrationFailed(f.resource(), f.reason());
    } else if (report instanceof DevicePluginReport.Retired r) {
      retired(r.resource());
    }
  }

  private void registrationFailed(String resource, String reason) {
    if (registrations.failed(resource)) {
      warn(
          registrationBudget,
          nodeRef(),
          REGISTRATION_FAILED,
          "resource "
              + resource
              + ": Register with the kubelet failed "
              + registrations.threshold()
              + " times in a row, still retrying: "
              + reason);
    }
  }

  private void retired(String resource) {
    registrations.forget(resource);
    if (resource.startsWith("akri.sh/")) {
      storms.forget(resource.substring("akri.sh/".length()));
    }
  }

  private void conflicted(String instanceName, int count) {
    if (storms.record(instanceName, count)) {
      warn(
          stormBudget,
          ObjectRef.instance(
              instanceNamespace.apply(instanceName),
              instanceName,
              instanceUid.apply(instanceName).orElse("")),
          SLOT_CONFLICT_STORM,
          "node "
              + node
              + ": at least "
              + storms.threshold()
              + " slot conflicts within "
              + describe(storms.window())
              + " (claims that lost their write to another node, or found the slot held"
              + " elsewhere); the kubelets may be scheduling onto slots that are taken");
    }
  }

  /** A plugin jar (or the plugins directory) could not be used. */
  private void pluginLoadFailed(PluginHandlerRegistry.LoadProblem problem) {
    warn(
        pluginBudget,
        nodeRef(),
        PLUGIN_LOAD_FAILED,
        "plugin jar "
            + problem.jar().getFileName()
            + " not loaded on node "
            + node
            + ": "
            + problem.reason());
  }

  private void warn(EventRateLimit budget, ObjectRef ref, String reason, String message) {
    EventRateLimit.Grant grant = budget.acquire();
    if (grant == EventRateLimit.Grant.GRANTED) {
      events.warning(ref, reason, message);
    } else if (grant == EventRateLimit.Grant.FIRST_REFUSAL) {
      // One line per streak: a kubelet refusing thousands of resources must not flood the log.
      LOG.warn(
          "{} {} (Event budget used up, not recorded; further ones are logged at debug until the"
              + " budget frees): {}",
          ref,
          reason,
          message);
    } else {
      LOG.debug("{} {} (Event budget used up, not recorded): {}", ref, reason, message);
    }
  }

  /** The Node as the kubelet refers to it in its Events (uid = name). */
  private ObjectRef nodeRef() {
    return ObjectRef.node(node, node);
  }

  private static String describe(Duration d) {
    long ms = d.toMillis();
    if (ms % 60_000 == 0) {
      return ms / 60_000 + "m";
    }
    return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
  }

  private static Function<String, String> constant(String namespace) {
    return name -> namespace;
  }
}
