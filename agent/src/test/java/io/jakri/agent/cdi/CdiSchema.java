package io.jakri.agent.cdi;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Checks a CDI spec as a container runtime would before using it: against the CDI specification's
 * published JSON schema (vendored unchanged under {@code src/test/resources/cdi-schema}, see its
 * README), plus the rules the schema leaves to the CDI parser (SPEC.md): kind and device name
 * syntax, the lowest {@code cdiVersion} the used fields need, no device without edits, env entries
 * {@code NAME=value}, device-node permissions out of {@code rwm}, unique device names. The rules
 * are written here from the specification, not taken from the agent's code.
 */
public final class CdiSchema {

  private static final Schema SCHEMA =
      SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_7)
          .getSchema(SchemaLocation.of("classpath:cdi-schema/schema.json"));

  private static final ObjectMapper JSON = new ObjectMapper();

  // SPEC.md "Kind": prefix a DNS subdomain; name: a letter first (the parser), a letter or digit
  // last, letters, digits, '-', '_', '.' between, at most 63 characters.
  private static final Pattern VENDOR =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern CLASS = Pattern.compile("[A-Za-z]([A-Za-z0-9_.-]*[A-Za-z0-9])?");
  // SPEC.md "CDI Devices": a letter or digit first and last; '-', '_', '.', ':' between.
  private static final Pattern DEVICE =
      Pattern.compile("[A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?");

  private CdiSchema() {}

  /** Every problem found in {@code json}; empty for a spec a runtime takes. */
  public static List<String> problems(byte[] json) {
    String text = new String(json, StandardCharsets.UTF_8);
    List<String> problems = new ArrayList<>();
    SCHEMA.validate(text, InputFormat.JSON).forEach(e -> problems.add("schema: " + e));
    JsonNode spec;
    try {
      spec = JSON.readTree(json);
    } catch (IOException e) {
      problems.add("not JSON: " + e.getMessage());
      return problems;
    }
    if (!problems.isEmpty()) {
      return problems;
    }
    String kind = spec.path("kind").asText();
    int slash = kind.indexOf('/');
    String vendor = slash < 0 ? "" : kind.substring(0, slash);
    String cls = slash < 0 ? kind : kind.substring(slash + 1);
    if (!VENDOR.matcher(vendor).matches() || vendor.length() > 253) {
      problems.add("kind " + kind + ": invalid vendor");
    }
    if (!CLASS.matcher(cls).matches() || cls.length() > 63) {
      problems.add("kind " + kind + ": invalid name");
    }
    String needed = "0.3.0";
    if (cls.contains(".") || spec.has("annotations")) {
      needed = "0.6.0";
    }
    Set<String> names = new HashSet<>();
    for (JsonNode device : spec.path("devices")) {
      String name = device.path("name").asText();
      if (!DEVICE.matcher(name).matches()) {
        problems.add("device " + name + ": invalid name");
      }
      if (!names.add(name)) {
        problems.add("device " + name + ": listed twice");
      }
      if (Character.isDigit(name.isEmpty() ? 'x' : name.charAt(0))) {
        needed = max(needed, "0.5.0");
      }
      if (device.has("annotations")) {
        needed = "0.6.0";
      }
      if (device.path("containerEdits").isEmpty()) {
        problems.add("device " + name + ": no edits");
      }
      needed = max(needed, edits(device.path("containerEdits"), problems));
    }
    if (names.isEmpty()) {
      problems.add("no devices");
    }
    needed = max(needed, edits(spec.path("containerEdits"), problems));
    String version = spec.path("cdiVersion").asText();
    if (!List.of("0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "0.8.0", "1.0.0", "1.1.0")
        .contains(version)) {
      problems.add("cdiVersion " + version + " is not a released one");
    } else if (!max(version, needed).equals(version)) {
      problems.add("cdiVersion " + version + " is lower than the " + needed + " its fields need");
    }
    return problems;
  }

  /** Checks one containerEdits object; returns the version its fields need. */
  private static String edits(JsonNode edits, List<String> problems) {
    String needed = "0.3.0";
    for (JsonNode env : edits.path("env")) {
      if (env.asText().indexOf('=') <= 0) {
        problems.add("env " + env + " is not NAME=value");
      }
    }
    for (JsonNode node : edits.path("deviceNodes")) {
      if (node.path("path").asText().isEmpty()) {
        problems.add("device node without path");
      }
      if (node.has("hostPath")) {
        needed = max(needed, "0.5.0");
      }
      String permissions = node.path("permissions").asText("");
      if (!permissions.isEmpty() && !permissions.matches("[rwm]+")) {
        problems.add("device node permissions " + permissions);
      }
    }
    for (JsonNode mount : edits.path("mounts")) {
      if (mount.path("hostPath").asText().isEmpty()
          || mount.path("containerPath").asText().isEmpty()) {
        problems.add("mount with an empty path");
      }
      if (mount.has("type")) {
        needed = max(needed, "0.4.0");
      }
    }
    return needed;
  }

  private static String max(String a, String b) {
    return compare(a, b) >= 0 ? a : b;
  }

  private static int compare(String a, String b) {
    String[] x = a.split("\\.");
    String[] y = b.split("\\.");
    for (int i = 0; i < 3; i++) {
      int c = Integer.compare(Integer.parseInt(x[i]), Integer.parseInt(y[i]));
      if (c != 0) {
        return c;
      }
    }
    return 0;
  }
}
