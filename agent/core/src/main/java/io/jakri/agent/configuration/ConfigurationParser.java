package io.jakri.agent.configuration;

import static io.jakri.agent.configuration.Fields.firstLine;
import static io.jakri.agent.configuration.Fields.map;
import static io.jakri.agent.configuration.Fields.string;
import static io.jakri.agent.configuration.Invalid.attempt;

import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.crd.InstanceObjectPlaceholders;
import io.jakri.handler.SafeYaml;
import io.jakri.handler.YamlMarks;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
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

  /** Deepest nesting of a Configuration file's YAML. */
  private static final int MAX_NESTING_DEPTH = 40;

  /** A DNS-1123 label, as the CRD's rules require (no '.'). */
  private static final Pattern NAME = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");

  private static final Set<String> SPEC_KEYS =
      Set.of(
          "discoveryHandler",
          "capacity",
          "brokerSpec",
          "instanceServiceSpec",
          "configurationServiceSpec",
          "brokerProperties",
          "instanceObjects");

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
      List<String> sources,
      List<HandlerOfInvalid> handlersOfInvalid) {
    public Result(
        List<ConfigurationSpec> configurations,
        List<String> errors,
        List<String> warnings,
        List<String> sources) {
      this(configurations, errors, warnings, sources, List.of());
    }

    public boolean ok() {
      return errors.isEmpty();
    }
  }

  /**
   * The discovery handler and details of a document that is invalid for other reasons, so that
   * {@code validate} can still run the handler's check and report every problem in one pass.
   *
   * @param where the source of the document, as in messages
   * @param name its {@code metadata.name} as written (may be invalid or empty)
   */
  public record HandlerOfInvalid(String where, String name, String handlerName, String details) {
    /** A stand-in Configuration for the handler's check: the name and details, nothing else. */
    public ConfigurationSpec asSpec() {
      return new ConfigurationSpec(
          name, handlerName, details, List.of(), 1, Map.of(), Optional.empty());
    }
  }

  private final boolean strict;

  /**
   * The agent's parser: problems of what only the controller uses (the embedded broker and Service
   * specs, brokerProperties that are not strings) are warnings, so the devices are still served;
   * {@code spec.instanceObjects} is not looked at.
   */
  public ConfigurationParser() {
    this(false);
  }

  /**
   * @param strict whether problems the API server would refuse at the controller's create (the
   *     embedded broker and Service specs, brokerProperties that are not strings) are errors, as
   *     {@code validate} and the admission webhook report them, rather than warnings; and whether
   *     {@code spec.instanceObjects} is checked (with the line and column of each problem when
   *     parsed from text)
   */
  public ConfigurationParser(boolean strict) {
    this.strict = strict;
  }

  /** Parses {@code text}; {@code source} (e.g. a file name) prefixes every message. */
  public Result parse(String source, String text) {
    List<ConfigurationSpec> configurations = new ArrayList<>();
    List<String> errors = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    List<Object> documents = new ArrayList<>();
    // Each document's index in the text, counting empty ones (for its positions).
    List<Integer> indexes = new ArrayList<>();
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
          indexes.add(read - 1);
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
    List<HandlerOfInvalid> handlersOfInvalid = new ArrayList<>();
    YamlPositions positions = new YamlPositions(text, MAX_NESTING_DEPTH);
    for (int i = 0; i < documents.size(); i++) {
      String where = documents.size() == 1 ? source : source + " (document " + (i + 1) + ")";
      try {
        configurations.add(
            configuration(
                where,
                documents.get(i),
                positions.document(indexes.get(i)),
                warnings,
                handlersOfInvalid));
        sources.add(where);
      } catch (Invalid e) {
        e.problems().forEach(problem -> errors.add(where + ": " + problem));
      }
    }
    return new Result(configurations, errors, warnings, sources, handlersOfInvalid);
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
    List<HandlerOfInvalid> handlersOfInvalid = new ArrayList<>();
    try {
      return new Result(
          List.of(configuration(source, document, YamlPositions.NONE, warnings, handlersOfInvalid)),
          errors,
          warnings,
          List.of(source));
    } catch (Invalid e) {
      e.problems().forEach(problem -> errors.add(source + ": " + problem));
      return new Result(List.of(), errors, warnings, List.of(), handlersOfInvalid);
    }
  }

  private ConfigurationSpec configuration(
      String where,
      Object doc,
      YamlPositions.Document positions,
      List<String> warnings,
      List<HandlerOfInvalid> handlersOfInvalid)
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
    Optional<DiscoveryHandlerFields.Handler> handler =
        DiscoveryHandlerFields.read(spec.get().get("discoveryHandler"), where, warnings, problems);
    Optional<Integer> capacity =
        attempt(problems, () -> SpecFields.capacity(spec.get().get("capacity")));
    Optional<Map<String, String>> brokerProperties =
        attempt(
            problems,
            () -> SpecFields.brokerProperties(spec.get().get("brokerProperties"), strict));
    List<String> controllerProblems = new ArrayList<>();
    Optional<Optional<String>> brokerKind =
        attempt(problems, () -> SpecFields.brokerKind(spec.get().get("brokerSpec")));
    if (spec.get().get("brokerSpec") != null
        || spec.get().get("instanceServiceSpec") != null
        || spec.get().get("configurationServiceSpec") != null) {
      controllerProblems.addAll(new EmbeddedSpecs().problems(spec.get()));
    }
    if (strict) {
      problems.addAll(controllerProblems);
      // The controller's objects per Instance: validate and the webhook check them; the agent has
      // no business with them and neither reads nor warns of them (the controller reports a
      // template it cannot render in the Configuration's BrokersReady condition).
      problems.addAll(instanceObjectProblems(spec.get().get("instanceObjects"), positions));
    } else {
      controllerProblems.forEach(
          p -> warnings.add(where + ": " + p + " (the controller's broker or Service will fail)"));
    }
    if (!problems.isEmpty()) {
      handler.ifPresent(
          h ->
              handlersOfInvalid.add(
                  new HandlerOfInvalid(where, rawName(root), h.name(), h.details())));
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
        handler.orElseThrow().name(),
        handler.orElseThrow().details(),
        handler.orElseThrow().properties(),
        capacity.orElseThrow(),
        brokerProperties.orElseThrow(),
        brokerKind.orElseThrow());
  }

  /**
   * The problems of {@code spec.instanceObjects} (the controller's objects per Instance): not a
   * list, an entry that is not an object, and what {@link InstanceObjectPlaceholders#check} finds
   * (a missing apiVersion or kind, placeholders, names, fields the controller sets, duplicates),
   * each as {@code <path> (line L, column C): <problem>}, the position that of the field or of its
   * nearest parent in the file (none for a document not read from text).
   */
  static List<String> instanceObjectProblems(Object value, YamlPositions.Document positions) {
    String field = "spec.instanceObjects";
    if (value == null) {
      return List.of();
    }
    if (!(value instanceof List<?> list)) {
      return List.of(
          field
              + positions.at(field)
              + ": must be a list of Kubernetes manifests, not "
              + shape(value));
    }
    List<Map<String, Object>> templates = new ArrayList<>();
    for (Object o : list) {
      @SuppressWarnings("unchecked")
      Map<String, Object> m = o instanceof Map<?, ?> ? (Map<String, Object>) o : null;
      templates.add(m);
    }
    return InstanceObjectPlaceholders.check(templates).stream()
        .map(
            p -> {
              String path =
                  field + "[" + p.index() + "]" + (p.path().isEmpty() ? "" : "." + p.path());
              return path + positions.at(path) + ": " + p.message();
            })
        .toList();
  }

  /** What a value of the wrong shape is, for messages. */
  private static String shape(Object value) {
    if (value instanceof Map) {
      return "a mapping";
    }
    return value instanceof String ? "a string" : String.valueOf(value);
  }

  /**
   * Whether an Instance of this Configuration, with {@code capacity} slots, fits in one
   * ListAndWatch response: the kubelet's gRPC client takes messages of at most {@link
   * #KUBELET_MAX_MESSAGE} bytes and drops the stream of a bigger one, so the resource would never
   * be advertised. Counted for the longest slot ids the Configuration can produce ({@code <name>-<6
   * hex>-<slot>}), every device reported Unhealthy (the longer health string).
   */
  static Optional<String> listAndWatchProblem(String name, int capacity) {
    return ListAndWatchSize.problem(name, capacity);
  }

  /**
   * How many devices of Configuration {@code name}, {@code capacity} slots each, fit in one
   * ListAndWatch message of its class resource, which lists every slot of every device.
   */
  public static long devicesPerListAndWatch(String name, int capacity) {
    return ListAndWatchSize.devicesPer(name, capacity);
  }

  /** Bytes of a ListAndWatchResponse listing {@code slots} devices of an Instance name length. */
  static long listAndWatchBytes(int instanceNameLength, int slots) {
    return ListAndWatchSize.bytes(instanceNameLength, slots);
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
              + "\" must be a DNS-1123 label: lower-case letters, digits and '-' (no '.'),"
              + " starting and ending with a letter or digit");
    }
    return Optional.empty();
  }

  private static void checkName(String name) throws Invalid {
    Optional<String> problem = nameProblem(name);
    if (problem.isPresent()) {
      throw new Invalid(problem.get());
    }
  }

  private static String rawName(Map<String, Object> root) {
    return root.get("metadata") instanceof Map<?, ?> m && m.get("name") instanceof String n
        ? n
        : "";
  }

  private static Yaml yaml() {
    return SafeYaml.parser(SafeYaml.MAX_CODE_POINTS * 16, MAX_NESTING_DEPTH);
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
    return YamlMarks.lineColumn(mark) + ": " + firstLine(problem);
  }
}
