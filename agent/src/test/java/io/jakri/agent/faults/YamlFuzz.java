package io.jakri.agent.faults;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A seeded generator of hostile and malformed Configuration YAML, discoveryDetails and parsed
 * documents. Deterministic for a seed, so a failing case can be replayed from its number. Not
 * thread-safe (one per test).
 */
final class YamlFuzz {

  private static final String[] HANDLERS = {"simulated", "debugEcho", "static", "zeroconf", ""};

  /** Field names each handler knows, plus a few it does not, so generated details hit real code. */
  private static final String[] DETAIL_KEYS = {
    "count",
    "idPrefix",
    "descriptions",
    "resourceName",
    "properties",
    "shared",
    "envPrefix",
    "annotationPrefix",
    "deviceFilePrefix",
    "deviceMapping",
    "hosts",
    "devices",
    "instanceID",
    "env",
    "kind",
    "name",
    "domain",
    "port",
    "txtRecords",
    "interface",
    "<<",
    "LD_PRELOAD",
    "PATH",
    "",
    " ",
    "a=b",
    "k\u0000",
    "\u00e9t\u00e9",
    "x".repeat(300)
  };

  private static final String[] SCALARS = {
    "0",
    "-1",
    "1",
    "2147483648",
    "-2147483649",
    "99999999999999999999999",
    "1e400",
    "0x1F",
    "0o17",
    "0b101",
    "017",
    "1_000",
    ".inf",
    "-.inf",
    ".nan",
    "1.5",
    "true",
    "false",
    "yes",
    "no",
    "on",
    "off",
    "~",
    "null",
    "''",
    "\"\"",
    "\" \"",
    "_http._tcp",
    "_x._udp",
    "local",
    "local.",
    "example.com/widget",
    "akri.sh/x",
    "kubernetes.io/x",
    "a/b/c",
    "/dev/null",
    "../../etc/passwd",
    "2001-12-14t21:59:43.10-05:00",
    "2001-13-45",
    "!!binary AAAA",
    "!!binary '%%%'",
    "!!int x",
    "!!float y",
    "!!bool maybe",
    "!!timestamp never",
    "!!str 1",
    "!!set {a, b}",
    "!!omap [a: 1]",
    "!!pairs [a: 1]",
    "!!null x",
    "!!java.io.File /tmp",
    "!<tag:yaml.org,2002:java.net.URL> [http://x]",
    "!!javax.script.ScriptEngineManager [x]",
    "&a x",
    "*a",
    "*undefined",
    "<<: *a",
    "\"\\u0000\"",
    "\"\\x1b[31m\"",
    "\"a\\nb\"",
    "\"\\ud800\"",
    "'\t'",
    "|\n  multi\n  line",
    ">\n  folded",
    "[",
    "]",
    "{",
    "}",
    "{a: 1, a: 2}",
    "[1, [2, [3]]]",
    "{? [a]: b}",
    "? complex\n: key",
    "%YAML 1.1",
    "---",
    "...",
    "@reserved",
    "`backtick",
    "# comment",
    "- dash",
    ":",
    "? ",
    "%",
    "|",
    ">",
    "\u202e\u0000",
    "\ufeff",
    "😀",
    "\uffff",
  };

  private final SplittableRandom random;

  YamlFuzz(long seed) {
    this.random = new SplittableRandom(seed);
  }

  int nextInt(int bound) {
    return random.nextInt(bound);
  }

  /** A Configuration document as text: structured, structured then mutated, or raw noise. */
  String configurationText() {
    return switch (random.nextInt(10)) {
      case 0 -> noise(random.nextInt(400));
      case 1, 2 -> mutate(configuration(true));
      case 3 -> configuration(true) + "\n---\n" + configuration(random.nextBoolean());
      default -> configuration(random.nextBoolean());
    };
  }

  /** discoveryDetails text: generated fields, mutated, or noise. */
  String detailsText() {
    return switch (random.nextInt(8)) {
      case 0 -> noise(random.nextInt(300));
      case 1 -> mutate(details(0));
      default -> details(0);
    };
  }

  /**
   * discoveryDetails for one handler: half the time a plausible document in that handler's own
   * format with some values replaced by hostile ones, else {@link #detailsText()}.
   */
  String detailsFor(String handler) {
    if (random.nextBoolean()) {
      return detailsText();
    }
    String template =
        switch (handler) {
          case "static" ->
              """
              deviceMapping:
              - hosts: [node-a, %s]
                devices:
                - resourceName: %s
                  instanceID: %s
                  env: {A: %s, %s: b}
              """;
          case "udev" ->
              """
              udevRules:
              - %s
              - 'SUBSYSTEM=="%s", ATTRS{%s}=="%s"'
              groupRecursive: %s
              permissions: %s
              """;
          case "zeroconf" ->
              """
              kind: %s
              name: %s
              domain: %s
              port: %s
              txtRecords: {%s: x}
              """;
          case "opcua" ->
              """
              opcuaDiscoveryMethod:
                standard:
                  discoveryUrls: [%s, %s]
              applicationNames: {action: %s, items: [%s]}
              pollIntervalSeconds: %s
              """;
          case "onvif" ->
              """
              ipAddresses: {action: %s, items: [%s]}
              macAddresses: {action: Exclude, items: [%s]}
              scopes: {items: [%s]}
              discoveryTimeoutSeconds: %s
              """;
          default ->
              """
              count: %s
              idPrefix: %s
              resourceName: %s
              properties: {A: %s}
              envPrefix: %s
              """;
        };
    String[] plausible =
        switch (handler) {
          case "static" -> new String[] {"node-b", "example.com/widget", "0001", "1", "B"};
          case "zeroconf" -> new String[] {"_http._tcp", "printer", "local", "631", "path"};
          case "opcua" ->
              new String[] {
                "opc.tcp://plc:4840/", "opc.tcp://10.0.0.1:48010/UA", "Include", "Boiler", "10"
              };
          case "onvif" ->
              new String[] {
                "Include", "10.0.0.1", "00:12:41:5c:a1:a5", "onvif://www.onvif.org/name/Cam", "1"
              };
          case "udev" ->
              new String[] {"KERNEL==\"null\"", "block", "vendor", "0x1af4", "true", "rw"};
          default -> new String[] {"3", "dev", "example.com/sim", "x", "SIM"};
        };
    Object[] values = new Object[plausible.length];
    for (int i = 0; i < values.length; i++) {
      values[i] = random.nextInt(4) == 0 ? scalarText().replace("\n", "\\n") : plausible[i];
    }
    String text = String.format(template, values);
    return random.nextInt(5) == 0 ? mutate(text) : text;
  }

  /** A parsed document tree as the cluster mode's watcher hands it over (maps, lists, scalars). */
  Object documentTree(int depth) {
    if (depth > 5 || random.nextInt(4) == 0) {
      return scalarObject();
    }
    if (random.nextBoolean()) {
      List<Object> list = new ArrayList<>();
      for (int i = random.nextInt(4); i > 0; i--) {
        list.add(documentTree(depth + 1));
      }
      return list;
    }
    Map<Object, Object> map = new LinkedHashMap<>();
    String[] keys = {
      "apiVersion",
      "kind",
      "metadata",
      "name",
      "spec",
      "discoveryHandler",
      "discoveryDetails",
      "discoveryProperties",
      "value",
      "valueFrom",
      "secretKeyRef",
      "configMapKeyRef",
      "key",
      "optional",
      "capacity",
      "brokerSpec",
      "brokerPodSpec",
      "brokerJobSpec",
      "brokerProperties"
    };
    for (int i = random.nextInt(5); i > 0; i--) {
      Object key = random.nextInt(12) == 0 ? scalarObject() : keys[random.nextInt(keys.length)];
      map.put(key, documentTree(depth + 1));
    }
    if (depth == 0 && random.nextBoolean()) {
      map.put("kind", "Configuration");
      map.put("metadata", Map.of("name", random.nextBoolean() ? "fuzz" : scalarText()));
    }
    return map;
  }

  private Object scalarObject() {
    return switch (random.nextInt(8)) {
      case 0 -> null;
      case 1 -> random.nextInt();
      case 2 -> random.nextLong();
      case 3 -> random.nextDouble() * 1e9;
      case 4 -> random.nextBoolean();
      case 5 -> new java.math.BigInteger(80, new java.util.Random(random.nextLong()));
      default -> scalarText();
    };
  }

  private String configuration(boolean plausible) {
    StringBuilder y = new StringBuilder();
    if (plausible || random.nextInt(5) > 0) {
      y.append("apiVersion: ").append(pick("akri.sh/v0", "akri.sh/v1", scalarText())).append('\n');
      y.append("kind: ").append(pick("Configuration", "Configuration", "Instance", scalarText()));
      y.append('\n');
    }
    y.append("metadata:\n  name: ")
        .append(
            pick("fuzz", "fuzz-" + random.nextInt(1000), "x".repeat(60), "Bad_Name", scalarText()))
        .append('\n');
    y.append("spec:\n");
    if (random.nextInt(6) > 0) {
      y.append("  capacity: ")
          .append(pick("1", "3", "0", "-5", "1000001", scalarText()))
          .append('\n');
    }
    y.append("  discoveryHandler:\n");
    String handler = HANDLERS[random.nextInt(HANDLERS.length)];
    y.append("    name: ").append(random.nextInt(10) == 0 ? scalarText() : handler).append('\n');
    switch (random.nextInt(4)) {
      case 0 -> {
        y.append("    discoveryDetails: |\n");
        details(0).lines().forEach(l -> y.append("      ").append(l).append('\n'));
      }
      case 1 -> y.append("    discoveryDetails: ").append(scalarText()).append('\n');
      case 2 -> {
        y.append("    discoveryDetails:\n");
        details(0).lines().forEach(l -> y.append("      ").append(l).append('\n'));
      }
      default -> {}
    }
    if (random.nextInt(3) == 0) {
      y.append("    discoveryProperties:\n");
      for (int i = random.nextInt(4); i >= 0; i--) {
        y.append("    - name: ").append(scalarText()).append('\n');
        switch (random.nextInt(4)) {
          case 0 -> y.append("      value: ").append(scalarText()).append('\n');
          case 1 ->
              y.append("      valueFrom:\n        secretKeyRef: {name: s, key: ")
                  .append(scalarText())
                  .append(", optional: ")
                  .append(scalarText())
                  .append("}\n");
          case 2 -> y.append("      valueFrom: {configMapKeyRef: {name: c}, secretKeyRef: {}}\n");
          default -> y.append("      valueFrom: ").append(scalarText()).append('\n');
        }
      }
    }
    if (random.nextInt(4) == 0) {
      y.append("  brokerSpec:\n")
          .append(pick("    brokerPodSpec: {containers: []}", "    brokerJobSpec: {}", "    {}"))
          .append('\n');
    }
    if (random.nextInt(4) == 0) {
      y.append("  brokerProperties:\n    ")
          .append(key())
          .append(": ")
          .append(scalarText())
          .append('\n');
    }
    return y.toString();
  }

  /** Details YAML built from the handlers' own field names with hostile values. */
  private String details(int depth) {
    StringBuilder y = new StringBuilder();
    String indent = "  ".repeat(depth);
    int fields = 1 + random.nextInt(5);
    for (int i = 0; i < fields; i++) {
      y.append(indent).append(key()).append(':');
      int shape = depth > 3 ? 0 : random.nextInt(5);
      switch (shape) {
        case 1 -> {
          y.append('\n');
          for (int j = random.nextInt(4); j >= 0; j--) {
            y.append(indent).append("- ").append(scalarText()).append('\n');
          }
        }
        case 2 -> y.append('\n').append(details(depth + 1));
        case 3 -> {
          y.append('\n');
          for (int j = random.nextInt(3); j >= 0; j--) {
            String inner = details(depth + 2);
            y.append(indent).append("- ").append(inner.strip()).append('\n');
          }
        }
        default -> y.append(' ').append(scalarText()).append('\n');
      }
    }
    return y.toString();
  }

  private String key() {
    String k = DETAIL_KEYS[random.nextInt(DETAIL_KEYS.length)];
    return k.isEmpty() || k.contains("=") || k.contains("\u0000") || k.isBlank()
        ? "\"" + k.replace("\u0000", "\\0") + "\""
        : k;
  }

  private String scalarText() {
    return switch (random.nextInt(6)) {
      case 0 -> Integer.toString(random.nextInt(-100, 20_000));
      case 1 -> "\"" + noise(random.nextInt(20)).replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
      default -> SCALARS[random.nextInt(SCALARS.length)];
    };
  }

  private String noise(int length) {
    StringBuilder s = new StringBuilder(length);
    String alphabet = ":-[]{}&*!|>'\"%@`#,?\n\t \\/=.";
    for (int i = 0; i < length; i++) {
      int r = random.nextInt(10);
      if (r < 4) {
        s.append(alphabet.charAt(random.nextInt(alphabet.length())));
      } else if (r < 8) {
        s.append((char) ('a' + random.nextInt(26)));
      } else if (r < 9) {
        s.append((char) random.nextInt(0x20));
      } else {
        s.appendCodePoint(random.nextInt(0x80, 0x10FFFF + 1) & ~0x800 | 0x80);
      }
    }
    return s.toString();
  }

  /** Byte-level-style mutations: flip, insert, delete, duplicate a span, truncate. */
  private String mutate(String text) {
    StringBuilder s = new StringBuilder(text);
    for (int n = 1 + random.nextInt(4); n > 0 && s.length() > 0; n--) {
      int at = random.nextInt(s.length());
      switch (random.nextInt(5)) {
        case 0 -> s.setCharAt(at, ":-[]{}&*!|>'\"% \n\t#".charAt(random.nextInt(18)));
        case 1 -> s.insert(at, noise(1 + random.nextInt(6)));
        case 2 -> s.delete(at, Math.min(s.length(), at + 1 + random.nextInt(8)));
        case 3 -> {
          int end = Math.min(s.length(), at + 1 + random.nextInt(40));
          s.insert(end, s.substring(at, end));
        }
        default -> s.setLength(at);
      }
    }
    return s.toString();
  }

  @SafeVarargs
  private <T> T pick(T... options) {
    return options[random.nextInt(options.length)];
  }
}
