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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The {@code validate} command: checks Configuration files offline (structure, names, YAML limits)
 * and, when the named handler is installed, its discoveryDetails. Prints one line per problem; exit
 * code 0 when every file is valid, 1 otherwise.
 */
public final class Validator {

  private final Path pluginsDir;
  private final PrintWriter out;
  private final PrintWriter err;

  public Validator(Path pluginsDir, PrintWriter out, PrintWriter err) {
    this.pluginsDir = pluginsDir;
    this.out = out;
    this.err = err;
  }

  public int validate(List<Path> files) {
    ConfigurationParser parser = new ConfigurationParser();
    int problems = 0;
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    try (PluginHandlerRegistry handlers = new PluginHandlerRegistry(pluginsDir, "0.1.0")) {
      if (Files.isDirectory(pluginsDir)) {
        handlers.loadAll();
      }
      for (Path file : files) {
        String text;
        try {
          text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
          err.println(file + ": cannot be read: " + e.getMessage());
          problems++;
          continue;
        }
        ConfigurationParser.Result result = parser.parse(file.toString(), text);
        result.warnings().forEach(w -> out.println("warning: " + w));
        result.errors().forEach(err::println);
        problems += result.errors().size();
        for (ConfigurationSpec spec : result.configurations()) {
          Optional<DiscoveryHandler> handler = handlers.find(spec.handlerName());
          if (handler.isEmpty()) {
            out.println(
                "warning: "
                    + file
                    + ": handler \""
                    + spec.handlerName()
                    + "\" is not installed in "
                    + pluginsDir
                    + "; discoveryDetails not checked");
            continue;
          }
          Validation v;
          try {
            v =
                handler
                    .get()
                    .validate(
                        new DiscoveryContext(
                            spec.name(), "validate", spec.discoveryDetails(), Map.of(), scheduler));
          } catch (RuntimeException | LinkageError e) {
            // A handler must not throw for bad input; a plugin that does is reported, not fatal.
            err.println(
                file
                    + ": "
                    + spec.name()
                    + ": handler \""
                    + spec.handlerName()
                    + "\" failed to check discoveryDetails: "
                    + e);
            problems++;
            continue;
          }
          v.warnings()
              .forEach(w -> out.println("warning: " + file + ": " + spec.name() + ": " + w));
          for (String e : v.errors()) {
            err.println(file + ": " + spec.name() + ": discoveryDetails: " + e);
            problems++;
          }
          if (v.valid() && result.ok()) {
            out.println(file + ": configuration " + spec.name() + " is valid");
          }
        }
      }
    } finally {
      scheduler.shutdownNow();
    }
    return problems == 0 ? 0 : 1;
  }
}
