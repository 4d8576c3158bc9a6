package io.jakri.agent.validate;

import io.jakri.agent.Safeguards;
import io.jakri.agent.configuration.ConfigurationParser;
import io.jakri.agent.discovery.ClassPolicy;
import io.jakri.agent.discovery.HandlerLimits;
import io.jakri.agent.discovery.KubeletCheckpoint;
import io.jakri.agent.discovery.PluginHandlerRegistry;
import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.agent.model.EnvContract;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.SafeYaml;
import io.jakri.handler.Validation;
import io.jakri.logging.DurationText;
import io.jakri.logging.LogText;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The {@code validate} command: checks Configuration files offline — structure (the CRD's fields),
 * names that would not make valid {@code akri.sh/<name>-<hash>} resource names, the YAML safety
 * limits, and, when the named handler is installed in the plugins directory, the handler's own
 * check of its discoveryDetails.
 *
 * <p>Every message names where it applies: {@code <file>} or {@code <file> (document <n>)} for a
 * file of several documents, then the field ({@code spec.discoveryHandler.discoveryDetails: ...}).
 * Problems go to {@code err}, one line each; warnings ({@code warning: ...}: a handler that is not
 * installed, unknown fields, a name used twice) and one verdict per valid Configuration go to
 * {@code out}. Warnings never change the exit code: 0 when no file has a problem, 1 otherwise.
 * Single-threaded: one {@link #validate} call at a time.
 */
public final class Validator {

  /** The system version plugins are checked against ({@code Plugin-Requires}). */
  private static final String SYSTEM_VERSION = "0.1.0";

  /** The field a handler's messages are about. */
  static final String DETAILS = "spec.discoveryHandler.discoveryDetails";

  private final Path pluginsDir;
  private final Set<String> classDomains;
  private final Optional<Path> devicePluginDir;
  private final PrintWriter out;
  private final PrintWriter err;
  private final Duration callTimeout;

  /**
   * @param pluginsDir handler plugin jars (the agent's {@code --plugins-dir}); need not exist
   * @param out warnings and verdicts
   * @param err problems
   */
  public Validator(Path pluginsDir, PrintWriter out, PrintWriter err) {
    this(pluginsDir, Safeguards.DEFAULT_CLASS_DOMAINS, Optional.empty(), out, err);
  }

  /**
   * @param classDomains the domains the agent allows classes in (its {@code --class-domains})
   * @param devicePluginDir the kubelet's device-plugin directory whose checkpoint names the
   *     resources other device plugins registered; read only, when present
   */
  public Validator(
      Path pluginsDir,
      Set<String> classDomains,
      Optional<Path> devicePluginDir,
      PrintWriter out,
      PrintWriter err) {
    this(pluginsDir, classDomains, devicePluginDir, out, err, HandlerLimits.DEFAULT_CALL_TIMEOUT);
  }

  /**
   * @param callTimeout how long a handler's {@code validate} may take before it is reported as not
   *     answering and left behind (on a daemon thread), as the agent abandons such calls
   */
  Validator(
      Path pluginsDir,
      Set<String> classDomains,
      Optional<Path> devicePluginDir,
      PrintWriter out,
      PrintWriter err,
      Duration callTimeout) {
    this.pluginsDir = pluginsDir;
    this.classDomains = Set.copyOf(classDomains);
    this.devicePluginDir = devicePluginDir;
    this.out = out;
    this.err = err;
    this.callTimeout = callTimeout;
  }

  /** Checks {@code files}; returns the exit code (0: no problem, warnings allowed; 1: problems). */
  public int validate(List<Path> files) {
    ConfigurationParser parser = new ConfigurationParser(true);
    Report printed =
        new Report() {
          @Override
          public void problem(String message) {
            err.println(message);
          }

          @Override
          public void warning(String message) {
            out.println("warning: " + message);
          }
        };
    int problems = 0;
    // Where each Configuration name was first seen, across all files.
    Map<String, String> names = new HashMap<>();
    // Which Configuration (and where) first named each class, across all files.
    Map<String, String> classOwners = new HashMap<>();
    Set<String> foreign =
        devicePluginDir.map(d -> new KubeletCheckpoint(d).foreignResources()).orElse(Set.of());
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    ExecutorService calls =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "jakri-validate-handler");
              t.setDaemon(true); // a handler that never returns must not keep the command alive
              return t;
            });
    try (PluginHandlerRegistry handlers = new PluginHandlerRegistry(pluginsDir, SYSTEM_VERSION)) {
      boolean pluginsDirExists = Files.isDirectory(pluginsDir);
      if (pluginsDirExists) {
        handlers.loadAll();
      }
      for (Path file : files) {
        String text;
        try {
          text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
          err.println(file + ": cannot be read: " + e);
          problems++;
          continue;
        }
        ConfigurationParser.Result result = parser.parse(file.toString(), text);
        result.warnings().forEach(w -> out.println("warning: " + w));
        result.errors().forEach(err::println);
        problems += result.errors().size();
        // A document invalid for other reasons still gets its handler's check: every problem of
        // the file in one pass.
        for (ConfigurationParser.HandlerOfInvalid invalid : result.handlersOfInvalid()) {
          Optional<DiscoveryHandler> handler = handlers.find(invalid.handlerName());
          if (handler.isPresent()) {
            problems +=
                checkDetails(
                    handler.get(),
                    invalid.asSpec(),
                    invalid.where(),
                    scheduler,
                    calls,
                    callTimeout,
                    printed);
          }
        }
        for (int i = 0; i < result.configurations().size(); i++) {
          ConfigurationSpec spec = result.configurations().get(i);
          String where = result.sources().get(i);
          String first = names.putIfAbsent(spec.name(), where);
          if (first != null) {
            out.println(
                "warning: "
                    + where
                    + ": metadata.name: \""
                    + spec.name()
                    + "\" is also the name of the Configuration in "
                    + first
                    + "; applied to one namespace, the later replaces the earlier");
          }
          int policy = checkPolicy(spec, where, classDomains, classOwners, foreign, printed);
          problems += policy;
          Optional<DiscoveryHandler> handler = handlers.find(spec.handlerName());
          if (handler.isEmpty()) {
            out.println(
                "warning: "
                    + where
                    + ": spec.discoveryHandler.name: handler \""
                    + spec.handlerName()
                    + "\" is not installed ("
                    + installed(pluginsDirExists, handlers)
                    + "); discoveryDetails not checked");
            if (policy == 0) {
              out.println(
                  where
                      + ": configuration "
                      + spec.name()
                      + " is valid (discoveryDetails not checked)");
            }
            continue;
          }
          int found =
              checkDetails(handler.get(), spec, where, scheduler, calls, callTimeout, printed);
          problems += found;
          if (found == 0 && policy == 0) {
            out.println(where + ": configuration " + spec.name() + " is valid");
          }
        }
      }
    } finally {
      scheduler.shutdownNow();
      calls.shutdownNow();
    }
    return problems == 0 ? 0 : 1;
  }

  /**
   * The agent's policies: class names (DESIGN §4: the {@code resourceName} keys of the details, as
   * the bundled handlers name a device's class) that the agent would refuse, are errors;
   * brokerProperties with reserved env names, and env entries the agent would drop, are warnings.
   * Returns the problem count.
   */
  static int checkPolicy(
      ConfigurationSpec spec,
      String where,
      Set<String> classDomains,
      Map<String, String> classOwners,
      Set<String> foreign,
      Report report) {
    int problems = 0;
    Details details = Details.of(spec.discoveryDetails());
    for (String cls : details.classes()) {
      if (!ClassPolicy.validName(cls)) {
        continue; // the handler's own check names what is wrong with it
      }
      Optional<String> refusal = ClassPolicy.nameRule(spec.name(), cls, classDomains);
      String owner = classOwners.putIfAbsent(cls, spec.name() + " (" + where + ")");
      if (refusal.isEmpty() && owner != null && !owner.startsWith(spec.name() + " (")) {
        refusal =
            Optional.of(
                "class "
                    + cls
                    + " is also used by Configuration "
                    + owner
                    + "; a class belongs to one Configuration and the agent refuses the later");
      }
      if (refusal.isEmpty() && foreign.contains(cls)) {
        refusal =
            Optional.of(
                "class "
                    + cls
                    + " is registered with the kubelet by another device plugin on this node"
                    + " (its checkpoint); registering it would replace that plugin");
      }
      if (refusal.isPresent()) {
        report.problem(where + ": " + DETAILS + ": " + refusal.get());
        problems++;
      }
    }
    List<String> reserved =
        spec.brokerProperties().keySet().stream()
            .filter(n -> EnvContract.validName(n) && EnvContract.reserved(n))
            .sorted()
            .toList();
    for (String name : reserved) {
      report.warning(
          where
              + ": spec.brokerProperties."
              + name
              + ": reserved env name (it changes how programs in every container given the"
              + " device run); the agent refuses this Configuration unless it runs with"
              + " --allow-reserved-broker-env");
    }
    for (String drop : EnvContract.brokerPropertyDrops(spec.brokerProperties())) {
      report.warning(where + ": " + drop);
    }
    for (String name : details.envNames()) {
      EnvContract.dropReason(name, "", false)
          .ifPresent(
              reason ->
                  report.warning(
                      where
                          + ": "
                          + DETAILS
                          + ": device property "
                          + LogText.quote(name)
                          + " is not given to containers: "
                          + reason));
    }
    for (String prefix : details.envPrefixes()) {
      // envPrefix names the env vars <envPrefix>_<device id>: reserved when the prefix makes them.
      if (EnvContract.reserved(prefix + "_")) {
        report.warning(
            where
                + ": "
                + DETAILS
                + ": device env "
                + LogText.quote(prefix + "_<device id>")
                + " is not given to containers: "
                + EnvContract.deviceEnvDropReason(prefix + "_", "").orElseThrow());
      }
    }
    return problems;
  }

  /**
   * What the details say about classes and env, by the bundled handlers' conventions: {@code
   * resourceName} values name a class, the keys of {@code env} and {@code properties} mappings name
   * device properties, {@code envPrefix} values start the names of a device's own env ({@code
   * <envPrefix>_<device id>}). Details that are not YAML say nothing.
   */
  private record Details(Set<String> classes, Set<String> envNames, Set<String> envPrefixes) {
    static Details of(String text) {
      Set<String> classes = new TreeSet<>();
      Set<String> env = new TreeSet<>();
      Set<String> prefixes = new TreeSet<>();
      Object doc;
      try {
        doc = SafeYaml.parser(SafeYaml.MAX_CODE_POINTS * 16, 40).load(text);
      } catch (RuntimeException | StackOverflowError e) {
        return new Details(classes, env, prefixes);
      }
      walk(doc, classes, env, prefixes, 0);
      return new Details(classes, env, prefixes);
    }

    private static void walk(
        Object node, Set<String> classes, Set<String> env, Set<String> prefixes, int depth) {
      if (depth > 40) {
        return;
      }
      if (node instanceof Map<?, ?> map) {
        for (Map.Entry<?, ?> e : map.entrySet()) {
          String key = String.valueOf(e.getKey());
          Object value = e.getValue();
          if (key.equals("resourceName") && isScalar(value)) {
            classes.add(String.valueOf(value));
          } else if (key.equals("envPrefix") && isScalar(value)) {
            prefixes.add(String.valueOf(value));
          } else if ((key.equals("env") || key.equals("properties"))
              && value instanceof Map<?, ?> m) {
            m.keySet().forEach(k -> env.add(String.valueOf(k)));
          }
          walk(value, classes, env, prefixes, depth + 1);
        }
      } else if (node instanceof List<?> list) {
        list.forEach(item -> walk(item, classes, env, prefixes, depth + 1));
      }
    }

    private static boolean isScalar(Object value) {
      return value instanceof String || value instanceof Number || value instanceof Boolean;
    }
  }

  /**
   * Runs the handler's check of the details on a daemon thread of {@code calls}, waiting at most
   * {@link #callTimeout}; prints its messages; returns the problem count.
   */
  static int checkDetails(
      DiscoveryHandler handler,
      ConfigurationSpec spec,
      String where,
      ScheduledExecutorService scheduler,
      ExecutorService calls,
      Duration callTimeout,
      Report report) {
    Validation v;
    DiscoveryContext context =
        new DiscoveryContext(spec.name(), "validate", spec.discoveryDetails(), Map.of(), scheduler);
    Future<Validation> call = calls.submit(() -> handler.validate(context));
    try {
      v = call.get(callTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      call.cancel(true);
      return handlerProblem(
          report,
          where,
          spec,
          "did not answer within "
              + DurationText.of(callTimeout)
              + " while checking them (the handler blocks; the agent abandons such a call too)");
    } catch (ExecutionException e) {
      // A handler must not throw for bad input; a plugin that does is reported, not fatal.
      return handlerProblem(report, where, spec, "failed while checking them: " + e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      call.cancel(true);
      return handlerProblem(report, where, spec, "was interrupted while checking them");
    }
    v.warnings().forEach(w -> report.warning(where + ": " + DETAILS + ": " + w));
    v.errors().forEach(e -> report.problem(where + ": " + DETAILS + ": " + e));
    return v.errors().size();
  }

  /** Prints a problem of the handler's check of the details; returns the problem count, 1. */
  private static int handlerProblem(
      Report report, String where, ConfigurationSpec spec, String what) {
    report.problem(where + ": " + DETAILS + ": handler \"" + spec.handlerName() + "\" " + what);
    return 1;
  }

  /** Where the checks' messages go: problems make a Configuration invalid, warnings do not. */
  interface Report {
    void problem(String message);

    void warning(String message);
  }

  private String installed(boolean pluginsDirExists, PluginHandlerRegistry handlers) {
    if (!pluginsDirExists) {
      return "no plugins directory " + pluginsDir + "; see --plugins-dir";
    }
    if (handlers.names().isEmpty()) {
      return "no handler plugins in " + pluginsDir;
    }
    return "installed in " + pluginsDir + ": " + String.join(", ", handlers.names());
  }
}
