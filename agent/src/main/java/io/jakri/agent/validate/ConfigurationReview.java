package io.jakri.agent.validate;

import io.jakri.agent.configuration.ConfigurationParser;
import io.jakri.agent.discovery.PluginHandlerRegistry;
import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.handler.DiscoveryHandler;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * {@code validate}'s checks of one Configuration object, for the admission webhook: the same parser
 * (strict: what the API server would refuse at the controller's create is a problem), the agent's
 * class and env policies, and the installed handler's check of its discoveryDetails. What {@code
 * validate} checks across files (a name or class used twice, the kubelet's checkpoint) is not known
 * here. Handler plugins are loaded once, at construction. Calls are serialised.
 */
public final class ConfigurationReview implements AutoCloseable {

  /**
   * What a review found.
   *
   * @param problems why the Configuration is refused, each naming its field; empty when allowed
   * @param warnings what is worth knowing but allowed (an admission response's warnings)
   */
  public record Verdict(List<String> problems, List<String> warnings) {
    public Verdict {
      problems = List.copyOf(problems);
      warnings = List.copyOf(warnings);
    }

    public boolean allowed() {
      return problems.isEmpty();
    }
  }

  private final PluginHandlerRegistry handlers;
  private final Path pluginsDir;
  private final Set<String> classDomains;
  private final Duration callTimeout;
  private final ConfigurationParser parser = new ConfigurationParser(true);
  private final ScheduledExecutorService scheduler;
  private final ExecutorService calls;

  /**
   * @param pluginsDir the handler plugins whose checks of discoveryDetails run; when missing,
   *     details are not checked (a warning says so)
   * @param classDomains the domains the agents allow classes in (their {@code --class-domains})
   * @param callTimeout how long a handler's check may take before it is reported as not answering
   */
  public ConfigurationReview(Path pluginsDir, Set<String> classDomains, Duration callTimeout) {
    this.pluginsDir = pluginsDir;
    this.classDomains = Set.copyOf(classDomains);
    this.callTimeout = callTimeout;
    this.handlers = new PluginHandlerRegistry(pluginsDir, "0.1.0");
    this.scheduler =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "jakri-review-scheduler");
              t.setDaemon(true);
              return t;
            });
    this.calls =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "jakri-review-handler");
              t.setDaemon(true); // a handler that never returns is left behind, as the agent does
              return t;
            });
  }

  private boolean loaded;

  /** Loads the handler plugins once, before the first review. */
  private void load() {
    if (!loaded) {
      loaded = true;
      if (Files.isDirectory(pluginsDir)) {
        handlers.loadAll();
      }
    }
  }

  /** The names of the handlers whose details are checked (loads them). */
  public synchronized Set<String> handlers() {
    load();
    return handlers.names();
  }

  /** The plugin jars the handlers will be loaded from, without loading them. */
  public List<String> pluginJars() {
    try (var jars = Files.list(pluginsDir)) {
      return jars.map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".jar"))
          .sorted()
          .toList();
    } catch (java.io.IOException e) {
      return List.of();
    }
  }

  /**
   * Reviews {@code document}, a Configuration as maps, lists and scalars (JSON as read); {@code
   * where} starts every message ({@code configuration default/broker}).
   */
  public synchronized Verdict review(String where, Object document) {
    load();
    List<String> problems = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    Validator.Report report =
        new Validator.Report() {
          @Override
          public void problem(String message) {
            problems.add(message);
          }

          @Override
          public void warning(String message) {
            warnings.add(message);
          }
        };
    ConfigurationParser.Result result = parser.check(where, document);
    problems.addAll(result.errors());
    warnings.addAll(result.warnings());
    for (ConfigurationParser.HandlerOfInvalid invalid : result.handlersOfInvalid()) {
      handlers
          .find(invalid.handlerName())
          .ifPresent(
              h ->
                  Validator.checkDetails(
                      h, invalid.asSpec(), where, scheduler, calls, callTimeout, report));
    }
    for (ConfigurationSpec spec : result.configurations()) {
      Validator.checkPolicy(spec, where, classDomains, new HashMap<>(), Set.of(), report);
      Optional<DiscoveryHandler> handler = handlers.find(spec.handlerName());
      if (handler.isEmpty()) {
        warnings.add(
            where
                + ": spec.discoveryHandler.name: handler \""
                + spec.handlerName()
                + "\" is not installed beside the webhook ("
                + (handlers.names().isEmpty()
                    ? "no handler plugins in " + pluginsDir
                    : "installed: " + String.join(", ", handlers.names()))
                + "); discoveryDetails not checked");
      } else {
        Validator.checkDetails(handler.get(), spec, where, scheduler, calls, callTimeout, report);
      }
    }
    return new Verdict(problems, warnings);
  }

  @Override
  public void close() {
    scheduler.shutdownNow();
    calls.shutdownNow();
    handlers.close();
  }
}
