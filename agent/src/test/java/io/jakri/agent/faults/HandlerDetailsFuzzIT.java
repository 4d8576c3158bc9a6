package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.configuration.ConfigurationParser;
import io.jakri.agent.discovery.PluginHandlerRegistry;
import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Fuzzes every packaged handler's discoveryDetails checking (the real plugin jars, loaded the way
 * the agent loads them): validate never throws and names what is wrong; details it accepts start a
 * discovery without an InvalidDetailsException (handlers whose start touches the network, zeroconf,
 * onvif and opcua, are only validated).
 */
class HandlerDetailsFuzzIT {

  private static final Path PLUGINS = Path.of("target", "plugins").toAbsolutePath();
  private static final int CASES = Integer.getInteger("jakri.fuzz.cases", 4000) / 2;
  private static final Set<String> STARTABLE = Set.of("simulated", "debugEcho", "static", "udev");
  private static final List<String> HANDLERS =
      List.of(
          "simulated",
          "debugEcho",
          "static",
          "zeroconf",
          "udev",
          "onvif",
          "opcua",
          "coap",
          "modbus",
          "mqtt");

  private static PluginHandlerRegistry registry;
  private static ScheduledExecutorService scheduler;

  @BeforeAll
  static void load() {
    registry = new PluginHandlerRegistry(PLUGINS, "0.1.0");
    registry.loadAll();
    scheduler = Executors.newScheduledThreadPool(2);
  }

  @AfterAll
  static void unload() {
    scheduler.shutdownNow();
    registry.close();
  }

  @Test
  void everyHandlerRejectsGeneratedDetailsClearlyOrAcceptsThemConsistently() {
    assertThat(registry.names())
        .contains(
            "simulated",
            "debugEcho",
            "static",
            "zeroconf",
            "udev",
            "onvif",
            "opcua",
            "coap",
            "modbus",
            "mqtt");
    List<String> failures = new ArrayList<>();
    int total = 0;
    for (String name : HANDLERS) {
      DiscoveryHandler handler = registry.find(name).orElseThrow();
      YamlFuzz fuzz = new YamlFuzz(ConfigurationFuzzTest.SEED + name.hashCode());
      int valid = 0;
      for (int i = 0; i < CASES; i++) {
        String details = fuzz.detailsFor(name);
        if (exercise(handler, name + "-" + i, details, failures)) {
          valid++;
        }
      }
      total += CASES;
      System.out.printf("fuzz %s: %d cases, %d valid%n", name, CASES, valid);
    }
    System.out.printf(
        "FAULT fuzz-discovery-details cases=%d recovered=%d lost=%d%n",
        total, total - failures.size(), failures.size());
    assertThat(failures).isEmpty();
  }

  @Test
  void generatedConfigurationsGoThroughParserAndTheirHandler() {
    ConfigurationParser parser = new ConfigurationParser();
    YamlFuzz fuzz = new YamlFuzz(ConfigurationFuzzTest.SEED + 7);
    List<String> failures = new ArrayList<>();
    int handed = 0;
    for (int i = 0; i < CASES; i++) {
      String text = fuzz.configurationText();
      ConfigurationParser.Result result;
      try {
        result = parser.parse("c" + i, text);
      } catch (RuntimeException | Error e) {
        failures.add("c" + i + ": parser threw " + e);
        continue;
      }
      for (ConfigurationSpec spec : result.configurations()) {
        Optional<DiscoveryHandler> handler = registry.find(spec.handlerName());
        if (handler.isPresent()) {
          handed++;
          exercise(handler.get(), "c" + i, spec.discoveryDetails(), failures);
        }
      }
    }
    System.out.printf(
        "FAULT fuzz-configuration-to-handler cases=%d recovered=%d lost=%d (handed to a handler:"
            + " %d)%n",
        CASES, CASES - failures.size(), failures.size(), handed);
    assertThat(failures).isEmpty();
  }

  @Test
  void everyHandlerRefusesYamlAttacksInItsDetailsQuickly() {
    List<String> failures = new ArrayList<>();
    int cases = 0;
    for (String name : HANDLERS) {
      DiscoveryHandler handler = registry.find(name).orElseThrow();
      for (Map.Entry<String, String> attack : YamlAttacks.all().entrySet()) {
        cases++;
        long start = System.nanoTime();
        try {
          Validation v =
              handler.validate(
                  new DiscoveryContext("fuzz", "node-a", attack.getValue(), Map.of(), scheduler));
          if (v.valid() && !YamlAttacks.HARMLESS_WITHIN_LIMITS.contains(attack.getKey())) {
            failures.add(name + " accepted " + attack.getKey());
          }
        } catch (RuntimeException | Error e) {
          failures.add(name + " threw " + e + " on " + attack.getKey());
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        if (ms > 3000) {
          failures.add(name + " took " + ms + " ms on " + attack.getKey());
        }
      }
    }
    System.out.printf(
        "FAULT yaml-attacks-handlers cases=%d recovered=%d lost=%d%n",
        cases, cases - failures.size(), failures.size());
    assertThat(failures).isEmpty();
  }

  /** Runs one case; returns whether the handler accepted the details. */
  private static boolean exercise(
      DiscoveryHandler handler, String label, String details, List<String> failures) {
    DiscoveryContext context = new DiscoveryContext("fuzz", "node-a", details, Map.of(), scheduler);
    Validation validation;
    try {
      validation = handler.validate(context);
    } catch (RuntimeException | Error e) {
      failures.add(label + ": " + handler.name() + ".validate threw " + e + " on:\n" + details);
      return false;
    }
    for (String error : validation.errors()) {
      if (error == null || error.isBlank()) {
        failures.add(label + ": blank error for:\n" + details);
      }
    }
    if (!validation.valid()) {
      return false;
    }
    if (STARTABLE.contains(handler.name())) {
      try {
        Discovery discovery = handler.start(context, new Quiet());
        discovery.close();
      } catch (InvalidDetailsException e) {
        failures.add(
            label + ": validate accepted but start refused (" + e.getMessage() + "):\n" + details);
      } catch (Exception | Error e) {
        failures.add(label + ": start threw " + e + " on:\n" + details);
      }
    }
    return true;
  }

  /** Drops what a started discovery reports. */
  private static final class Quiet implements DeviceListener {
    @Override
    public void devices(List<DiscoveredDevice> devices) {}

    @Override
    public void failed(String reason, Throwable cause) {}
  }
}
