package io.jakri.agent.validate;

import io.jakri.agent.configuration.ConfigurationParser;
import io.jakri.agent.configuration.ConfigurationSpec;
import io.jakri.agent.discovery.PluginHandlerRegistry;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.Validation;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

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
  private final PrintWriter out;
  private final PrintWriter err;

  /**
   * @param pluginsDir handler plugin jars (the agent's {@code --plugins-dir}); need not exist
   * @param out warnings and verdicts
   * @param err problems
   */
  public Validator(Path pluginsDir, PrintWriter out, PrintWriter err) {
    this.pluginsDir = pluginsDir;
    this.out = out;
    this.err = err;
  }

  /** Checks {@code files}; returns the exit code (0: no problem, warnings allowed; 1: problems). */
  public int validate(List<Path> files) {
    ConfigurationParser parser = new ConfigurationParser();
    int problems = 0;
    // Where each Configuration name was first seen, across all files.
    Map<String, String> names = new HashMap<>();
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
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
            out.println(
                where
                    + ": configuration "
                    + spec.name()
                    + " is valid (discoveryDetails not checked)");
            continue;
          }
          int found = checkDetails(handler.get(), spec, where, scheduler);
          problems += found;
          if (found == 0) {
            out.println(where + ": configuration " + spec.name() + " is valid");
          }
        }
      }
    } finally {
      scheduler.shutdownNow();
    }
    return problems == 0 ? 0 : 1;
  }

  /** Runs the handler's check of the details; prints its messages; returns the problem count. */
  private int checkDetails(
      DiscoveryHandler handler,
      ConfigurationSpec spec,
      String where,
      ScheduledExecutorService scheduler) {
    Validation v;
    try {
      v =
          handler.validate(
              new DiscoveryContext(
                  spec.name(), "validate", spec.discoveryDetails(), Map.of(), scheduler));
    } catch (RuntimeException | LinkageError e) {
      // A handler must not throw for bad input; a plugin that does is reported, not fatal.
      err.println(
          where
              + ": "
              + DETAILS
              + ": handler \""
              + spec.handlerName()
              + "\" failed while checking them: "
              + e);
      return 1;
    }
    v.warnings().forEach(w -> out.println("warning: " + where + ": " + DETAILS + ": " + w));
    v.errors().forEach(e -> err.println(where + ": " + DETAILS + ": " + e));
    return v.errors().size();
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
