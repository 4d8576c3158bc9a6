package io.jakri.agent.configuration;

import com.google.protobuf.CodedOutputStream;
import io.jakri.agent.configuration.ConfigurationSpec.DiscoveryProperty;
import io.jakri.agent.configuration.ConfigurationSpec.KeyRef;
import io.jakri.handler.SafeYaml;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * Reads Configurations from YAML in the same format as the {@code configurations.akri.sh} custom
 * resource (several documents per file allowed). Untrusted input: the same limits as {@link
 * SafeYaml}, and every problem becomes one message naming the source, document and field.
 * Thread-safe (a parser per call).
 */
public final class ConfigurationParser {

  /** Longest Configuration name: keeps {@code akri.sh/<name>-<6 hex>} a valid resource name. */
  public static final int MAX_NAME_LENGTH = 63 - 7;

  /** Most YAML documents read from one source; a file with more is rejected as a whole. */
  public static final int MAX_DOCUMENTS = 1000;

  /** Largest {@code spec.capacity}. */
  public static final int MAX_CAPACITY = 1_000_000;

  /** The largest gRPC message the kubelet's device-plugin client receives (gRPC's default). */
  public static final int KUBELET_MAX_MESSAGE = 4 * 1024 * 1024;

  private static final int UNHEALTHY_LENGTH = "Unhealthy".length();

  private static final Set<String> HANDLER_KEYS =
      Set.of("name", "discoveryDetails", "discoveryProperties");

  private static final Pattern NAME = Pattern.compile("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");
  private static final Set<String> SPEC_KEYS =
      Set.of(
          "discoveryHandler",
          "capacity",
          "brokerSpec",
          "instanceServiceSpec",
          "configurationServiceSpec",
          "brokerProperties");

  /**
   * The outcome of reading one source.
   *
   * @param sources where each of {@code configurations} came from, in the same order: the source,
   *     or {@code "<source> (document <n>)"} in a source of several documents, as in messages
   */
  public record Result(
      List<ConfigurationSpec> configurations,
      List<String> errors,
      List<String> warnings,
      List<String> sources) {
    public boolean ok() {
      return errors.isEmpty();
    }
  }

  /** Parses {@code text}; {@code source} (e.g. a file name) prefixes every message. */
  public Result parse(String source, String text) {
    List<ConfigurationSpec> configurations = new ArrayList<>();
    List<String> errors = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    List<Object> documents = new ArrayList<>();
    if (text.codePointCount(0, text.length()) > SafeYaml.MAX_CODE_POINTS * 16) {
      errors.add(source + ": file is larger than " + SafeYaml.MAX_CODE_POINTS * 16 + " characters");
      return new Result(configurations, errors, warnings, List.of());
    }
    try {
      int read = 0;
      for (Object doc : yaml().loadAll(text)) {
        if (++read > MAX_DOCUMENTS) {
          // Each document costs a parse and possibly an error message: cap the amplification.
          errors.add(source + ": more than " + MAX_DOCUMENTS + " YAML documents in one file");
          return new Result(configurations, errors, warnings, List.of());
        }
        if (SafeYaml.recursive(doc)) {
          // Legal YAML, but walking it (equals, hashCode, toString, dump) would never stop.
          errors.add(source + ": invalid YAML: an alias refers to its own parent");
          return new Result(configurations, errors, warnings, List.of());
        }
        if (doc != null) {
          documents.add(doc);
        }
      }
    } catch (MarkedYAMLException e) {
      errors.add(source + ": invalid YAML: " + marked(e));
      return new Result(configurations, errors, warnings, List.of());
    } catch (YAMLException | IllegalStateException e) {
      errors.add(source + ": invalid YAML: " + firstLine(e.getMessage()));
      return new Result(configurations, errors, warnings, List.of());
    } catch (RuntimeException e) {
      // SnakeYAML lets a few exceptions of explicitly tagged scalars through unwrapped
      // (NumberFormatException for "!!float y", IllegalArgumentException for bad "!!binary").
      errors.add(source + ": invalid YAML: a tagged value cannot be read: " + e);
      return new Result(configurations, errors, warnings, List.of());
    } catch (StackOverflowError e) {
      errors.add(source + ": invalid YAML: nested too deeply");
      return new Result(configurations, errors, warnings, List.of());
    }
    if (documents.isEmpty()) {
      errors.add(source + ": no Configuration in it (the file is empty or only comments)");
      return new Result(configurations, errors, warnings, List.of());
    }
    List<String> sources = new ArrayList<>();
    for (int i = 0; i < documents.size(); i++) {
      String where = documents.size() == 1 ? source : source + " (document " + (i + 1) + ")";
      try {
        configurations.add(configuration(where, documents.get(i), warnings));
        sources.add(where);
      } catch (Invalid e) {
        e.problems().forEach(problem -> errors.add(where + ": " + problem));
      }
    }
    return new Result(configurations, errors, warnings, sources);
  }

  /**
   * Checks one already-parsed document (e.g. a custom resource converted to maps and lists) with
   * the same rules as {@link #parse}.
   */
  public Result check(String source, Object document) {
    List<String> errors = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    if (SafeYaml.recursive(document)) {
      errors.add(source + ": the document refers to itself");
      return new Result(List.of(), errors, warnings, List.of());
    }
    try {
      return new Result(
          List.of(configuration(source, document, warnings)), errors, warnings, List.of(source));
    } catch (Invalid e) {
      e.problems().forEach(problem -> errors.add(source + ": " + problem));
      return new Result(List.of(), errors, warnings, List.of());
    }
  }

  private ConfigurationSpec configuration(String where, Object doc, List<String> warnings)
      throws Invalid {
    Map<String, Object> root = map(doc, "document");
    String kind = string(root.get("kind"), "kind").orElse("");
    if (!kind.equals("Configuration")) {
      throw new Invalid("kind must be Configuration but is \"" + kind + "\"");
    }
    String apiVersion = string(root.get("apiVersion"), "apiVersion").orElse("");
    if (!apiVersion.equals("akri.sh/v0")) {
      warnings.add(where + ": apiVersion is \"" + apiVersion + "\", expected akri.sh/v0");
    }
    // Every independent part is checked even when an earlier one failed, so that one run reports
    // every problem of the document.
    List<String> problems = new ArrayList<>();
    Optional<String> name =
        attempt(
            problems,
            () -> {
              Map<String, Object> metadata = map(root.get("metadata"), "metadata");
              String n =
                  string(metadata.get("name"), "metadata.name")
                      .orElseThrow(() -> new Invalid("metadata.name is required"));
              checkName(n);
              return n;
            });
    Optional<Map<String, Object>> spec = attempt(problems, () -> map(root.get("spec"), "spec"));
    if (spec.isEmpty()) {
      throw new Invalid(problems);
    }
    for (String key : spec.get().keySet()) {
      if (!SPEC_KEYS.contains(key)) {
        warnings.add(where + ": unknown field spec." + key + " ignored");
      }
    }
    Optional<Map<String, Object>> handler =
        attempt(problems, () -> map(spec.get().get("discoveryHandler"), "spec.discoveryHandler"));
    Optional<String> handlerName = Optional.empty();
    Optional<String> details = Optional.empty();
    Optional<List<DiscoveryProperty>> properties = Optional.empty();
    if (handler.isPresent()) {
      for (String key : handler.get().keySet()) {
        if (!HANDLER_KEYS.contains(key)) {
          warnings.add(where + ": unknown field spec.discoveryHandler." + key + " ignored");
        }
      }
      handlerName =
          attempt(
              problems,
              () ->
                  string(handler.get().get("name"), "spec.discoveryHandler.name")
                      .filter(s -> !s.isBlank())
                      .orElseThrow(() -> new Invalid("spec.discoveryHandler.name is required")));
      details = attempt(problems, () -> details(handler.get().get("discoveryDetails")));
      properties = properties(handler.get().get("discoveryProperties"), problems);
    }
    Optional<Integer> capacity = attempt(problems, () -> capacity(spec.get().get("capacity")));
    Optional<Map<String, String>> brokerProperties =
        attempt(problems, () -> stringMap(spec.get().get("brokerProperties")));
    Optional<Optional<String>> brokerKind =
        attempt(problems, () -> brokerKind(spec.get().get("brokerSpec")));
    if (!problems.isEmpty()) {
      throw new Invalid(problems);
    }
    if (name.isPresent() && capacity.isPresent()) {
      Optional<String> tooBig = listAndWatchProblem(name.get(), capacity.get());
      if (tooBig.isPresent()) {
        throw new Invalid(List.of(tooBig.get()));
      }
    }
    return new ConfigurationSpec(
        name.orElseThrow(),
        handlerName.orElseThrow(),
        details.orElseThrow(),
        properties.orElseThrow(),
        capacity.orElseThrow(),
        brokerProperties.orElseThrow(),
        brokerKind.orElseThrow());
  }

  /** One check that may fail with a problem; see {@link #attempt}. */
  private interface Check<T> {
    T run() throws Invalid;
  }

  /** Runs {@code check}; its problems are added to {@code problems} and the result is empty. */
  private static <T> Optional<T> attempt(List<String> problems, Check<T> check) {
    try {
      return Optional.of(check.run());
    } catch (Invalid e) {
      problems.addAll(e.problems());
      return Optional.empty();
    }
  }

  /**
   * Whether an Instance of this Configuration, with {@code capacity} slots, fits in one
   * ListAndWatch response: the kubelet's gRPC client takes messages of at most {@link
   * #KUBELET_MAX_MESSAGE} bytes and drops the stream of a bigger one, so the resource would never
   * be advertised. Counted for the longest slot ids the Configuration can produce ({@code <name>-<6
   * hex>-<slot>}), every device reported Unhealthy (the longer health string).
   */
  static Optional<String> listAndWatchProblem(String name, int capacity) {
    long bytes = listAndWatchBytes(name.length() + 7, capacity);
    if (bytes <= KUBELET_MAX_MESSAGE) {
      return Optional.empty();
    }
    return Optional.of(
        "spec.capacity "
            + capacity
            + " is too large: an Instance's "
            + capacity
            + " slots make a ListAndWatch message of "
            + bytes
            + " bytes, more than the kubelet accepts ("
            + KUBELET_MAX_MESSAGE
            + " bytes)");
  }

  /**
   * How many devices of Configuration {@code name}, {@code capacity} slots each, fit in one
   * ListAndWatch message of its class resource, which lists every slot of every device.
   */
  public static long devicesPerListAndWatch(String name, int capacity) {
    long perDevice = listAndWatchBytes(name.length() + 7, Math.max(1, capacity));
    return KUBELET_MAX_MESSAGE / Math.max(1, perDevice);
  }

  /** Bytes of a ListAndWatchResponse listing {@code slots} devices of an Instance name length. */
  static long listAndWatchBytes(int instanceNameLength, int slots) {
    long total = 0;
    long lower = 0;
    long limit = 10;
    for (int digits = 1; lower < slots; digits++, limit *= 10) {
      // Slots lower..upper-1 have ids of instanceNameLength + 1 + digits characters.
      long upper = Math.min(slots, limit);
      int idLength = instanceNameLength + 1 + digits;
      int device =
          CodedOutputStream.computeTagSize(1)
              + CodedOutputStream.computeUInt32SizeNoTag(idLength)
              + idLength
              + CodedOutputStream.computeTagSize(2)
              + CodedOutputStream.computeUInt32SizeNoTag(UNHEALTHY_LENGTH)
              + UNHEALTHY_LENGTH;
      total +=
          (upper - lower)
              * (CodedOutputStream.computeTagSize(1)
                  + CodedOutputStream.computeUInt32SizeNoTag(device)
                  + device);
      lower = upper;
    }
    return total;
  }

  /** Checks a Configuration name; the message says what is wrong. */
  public static Optional<String> nameProblem(String name) {
    if (name.length() > MAX_NAME_LENGTH) {
      return Optional.of(
          "metadata.name \""
              + name
              + "\" is longer than "
              + MAX_NAME_LENGTH
              + " characters: akri.sh/<name>-<hash> would not be a valid resource name");
    }
    if (!NAME.matcher(name).matches()) {
      return Optional.of(
          "metadata.name \""
              + name
              + "\" must consist of lower-case letters, digits, '-' and '.', and start and end"
              + " with a letter or digit");
    }
    return Optional.empty();
  }

  private static void checkName(String name) throws Invalid {
    Optional<String> problem = nameProblem(name);
    if (problem.isPresent()) {
      throw new Invalid(problem.get());
    }
  }

  private static String details(Object value) throws Invalid {
    if (value == null) {
      return "";
    }
    if (value instanceof String s) {
      return s;
    }
    if (value instanceof Map || value instanceof List) {
      // Akri wants a string; accept structured YAML and hand the handler the same text.
      DumperOptions options = new DumperOptions();
      options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
      try {
        return new Yaml(options).dump(value);
      } catch (YAMLException e) {
        // e.g. a string with characters YAML cannot print
        throw new Invalid(
            "spec.discoveryHandler.discoveryDetails cannot be written as YAML text: "
                + firstLine(e.getMessage()));
      }
    }
    throw new Invalid("spec.discoveryHandler.discoveryDetails must be a string");
  }

  private static Optional<List<DiscoveryProperty>> properties(Object value, List<String> problems) {
    if (value == null) {
      return Optional.of(List.of());
    }
    if (!(value instanceof List<?> list)) {
      problems.add("spec.discoveryHandler.discoveryProperties must be a list");
      return Optional.empty();
    }
    List<DiscoveryProperty> result = new ArrayList<>();
    boolean ok = true;
    for (int i = 0; i < list.size(); i++) {
      int index = i;
      Optional<DiscoveryProperty> property = attempt(problems, () -> property(list, index));
      ok &= property.isPresent();
      property.ifPresent(result::add);
    }
    return ok ? Optional.of(result) : Optional.empty();
  }

  private static DiscoveryProperty property(List<?> list, int i) throws Invalid {
    {
      String field = "spec.discoveryHandler.discoveryProperties[" + i + "]";
      Map<String, Object> entry = map(list.get(i), field);
      String name =
          string(entry.get("name"), field + ".name")
              .orElseThrow(() -> new Invalid(field + ".name is required"));
      Optional<String> literal = string(entry.get("value"), field + ".value");
      Object from = entry.get("valueFrom");
      if (literal.isPresent() == (from != null)) {
        throw new Invalid(field + " must have exactly one of value and valueFrom");
      }
      Optional<KeyRef> ref = Optional.empty();
      if (from != null) {
        Map<String, Object> f = map(from, field + ".valueFrom");
        Object secret = f.get("secretKeyRef");
        Object configMap = f.get("configMapKeyRef");
        if ((secret == null) == (configMap == null)) {
          throw new Invalid(
              field + ".valueFrom must have exactly one of secretKeyRef and configMapKeyRef");
        }
        boolean isSecret = secret != null;
        String refField = field + ".valueFrom." + (isSecret ? "secretKeyRef" : "configMapKeyRef");
        Map<String, Object> r = map(isSecret ? secret : configMap, refField);
        String refName =
            string(r.get("name"), refField + ".name")
                .orElseThrow(() -> new Invalid(refField + ".name is required"));
        String key =
            string(r.get("key"), refField + ".key")
                .orElseThrow(() -> new Invalid(refField + ".key is required"));
        boolean optional = Boolean.parseBoolean(string(r.get("optional"), "optional").orElse(""));
        ref =
            Optional.of(
                new KeyRef(
                    isSecret ? KeyRef.Kind.SECRET : KeyRef.Kind.CONFIG_MAP,
                    refName,
                    key,
                    string(r.get("namespace"), refField + ".namespace"),
                    optional));
      }
      return new DiscoveryProperty(name, literal, ref);
    }
  }

  private static int capacity(Object value) throws Invalid {
    if (value == null) {
      return 1;
    }
    if (value instanceof Integer i) {
      if (i < 1) {
        throw new Invalid("spec.capacity must be at least 1 but is " + i);
      }
      if (i > MAX_CAPACITY) {
        throw new Invalid("spec.capacity must be at most " + MAX_CAPACITY + " but is " + i);
      }
      return i;
    }
    if (value instanceof Long || value instanceof BigInteger) {
      BigInteger big = new BigInteger(value.toString());
      throw new Invalid(
          "spec.capacity "
              + big
              + " is too large: it must be at most "
              + MAX_CAPACITY
              + (big.signum() < 0 ? " and at least 1" : ""));
    }
    throw new Invalid("spec.capacity must be an integer");
  }

  private static Optional<String> brokerKind(Object value) throws Invalid {
    if (value == null) {
      return Optional.empty();
    }
    Map<String, Object> broker = map(value, "spec.brokerSpec");
    boolean pod = broker.get("brokerPodSpec") != null;
    boolean job = broker.get("brokerJobSpec") != null;
    if (pod == job) {
      throw new Invalid("spec.brokerSpec must have exactly one of brokerPodSpec and brokerJobSpec");
    }
    return Optional.of(pod ? "brokerPodSpec" : "brokerJobSpec");
  }

  private static Map<String, String> stringMap(Object value) throws Invalid {
    if (value == null) {
      return Map.of();
    }
    Map<String, Object> raw = map(value, "spec.brokerProperties");
    Map<String, String> result = new LinkedHashMap<>();
    for (Map.Entry<String, Object> e : raw.entrySet()) {
      Object v = e.getValue();
      if (v instanceof Map || v instanceof List) {
        throw new Invalid("spec.brokerProperties." + e.getKey() + " must be a string");
      }
      result.put(e.getKey(), v == null ? "" : String.valueOf(v));
    }
    return result;
  }

  private static Map<String, Object> map(Object value, String field) throws Invalid {
    if (value == null) {
      throw new Invalid(field + " is required");
    }
    if (!(value instanceof Map<?, ?> map)) {
      throw new Invalid(field + " must be a mapping");
    }
    Map<String, Object> result = new LinkedHashMap<>();
    for (Map.Entry<?, ?> e : map.entrySet()) {
      if (!(e.getKey() instanceof String key)) {
        throw new Invalid(field + " has a key that is not a string: " + e.getKey());
      }
      result.put(key, e.getValue());
    }
    return result;
  }

  private static Optional<String> string(Object value, String field) throws Invalid {
    if (value == null) {
      return Optional.empty();
    }
    if (value instanceof String || value instanceof Number || value instanceof Boolean) {
      return Optional.of(String.valueOf(value));
    }
    throw new Invalid(field + " must be a string");
  }

  private static Yaml yaml() {
    return SafeYaml.parser(SafeYaml.MAX_CODE_POINTS * 16, 40);
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "unreadable document";
    }
    String trimmed = message.strip();
    int newline = trimmed.indexOf('\n');
    return newline < 0 ? trimmed : trimmed.substring(0, newline);
  }

  /** "line 3, column 5: <problem>" for a YAML syntax error (SnakeYAML counts from 0). */
  private static String marked(MarkedYAMLException e) {
    Mark mark = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
    String problem = e.getProblem() != null ? e.getProblem() : firstLine(e.getMessage());
    if (e.getContext() != null && e.getProblem() != null) {
      problem = e.getContext() + ": " + e.getProblem();
    }
    if (mark == null) {
      return firstLine(problem);
    }
    return "line "
        + (mark.getLine() + 1)
        + ", column "
        + (mark.getColumn() + 1)
        + ": "
        + firstLine(problem);
  }

  /** The problems of one document. */
  private static final class Invalid extends Exception {
    private static final long serialVersionUID = 1L;

    private final List<String> problems;

    Invalid(String message) {
      super(message);
      this.problems = List.of(message);
    }

    Invalid(List<String> problems) {
      super(String.join("; ", problems));
      this.problems = List.copyOf(problems);
    }

    List<String> problems() {
      return problems;
    }
  }
}
