package io.jakri.agent.configuration;

import static io.jakri.agent.configuration.Fields.firstLine;
import static io.jakri.agent.configuration.Fields.map;
import static io.jakri.agent.configuration.Fields.string;
import static io.jakri.agent.configuration.Invalid.attempt;

import io.jakri.agent.model.ConfigurationSpec.DiscoveryProperty;
import io.jakri.agent.model.ConfigurationSpec.KeyRef;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * Reads a Configuration's {@code spec.discoveryHandler} (its name, {@code discoveryDetails} and
 * {@code discoveryProperties}) for {@link ConfigurationParser}, reporting every problem of it.
 */
final class DiscoveryHandlerFields {

  private static final Set<String> HANDLER_KEYS =
      Set.of("name", "discoveryDetails", "discoveryProperties");

  /** A valid {@code spec.discoveryHandler}. */
  record Handler(String name, String details, List<DiscoveryProperty> properties) {}

  private DiscoveryHandlerFields() {}

  /**
   * Reads {@code value}; each problem is added to {@code problems} (then the result is empty), each
   * unknown field to {@code warnings}, prefixed with {@code where}.
   */
  static Optional<Handler> read(
      Object value, String where, List<String> warnings, List<String> problems) {
    Optional<Map<String, Object>> handler =
        attempt(problems, () -> map(value, "spec.discoveryHandler"));
    if (handler.isEmpty()) {
      return Optional.empty();
    }
    for (String key : handler.get().keySet()) {
      if (!HANDLER_KEYS.contains(key)) {
        warnings.add(where + ": unknown field spec.discoveryHandler." + key + " ignored");
      }
    }
    Optional<String> name =
        attempt(
            problems,
            () ->
                string(handler.get().get("name"), "spec.discoveryHandler.name")
                    .filter(s -> !s.isBlank())
                    .orElseThrow(() -> new Invalid("spec.discoveryHandler.name is required")));
    Optional<String> details =
        attempt(problems, () -> details(handler.get().get("discoveryDetails")));
    Optional<List<DiscoveryProperty>> properties =
        properties(handler.get().get("discoveryProperties"), problems);
    if (name.isEmpty() || details.isEmpty() || properties.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(new Handler(name.get(), details.get(), properties.get()));
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
