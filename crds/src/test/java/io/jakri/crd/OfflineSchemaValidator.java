package io.jakri.crd;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelValidationException;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A test-only approximation of what the API server checks when a custom resource is written: the
 * OpenAPI keywords these CRDs use ({@code type}, {@code required}, {@code minimum}, {@code
 * minLength}, {@code maxLength}, {@code pattern}) and every {@code x-kubernetes-validations} rule,
 * evaluated with Google's CEL for Java with {@code self} bound to the node the rule sits on.
 *
 * <p>Not the API server: no defaulting, pruning, CEL cost limits, Kubernetes CEL extension
 * libraries or typed (schema-derived) CEL declarations ({@code self} is {@code dyn}). Enough to
 * show that each rule accepts the objects it should and rejects the ones it should.
 */
final class OfflineSchemaValidator {

  /** One rejected field: where (a path such as {@code spec.brokerSpec}) and the message. */
  record Violation(String path, String message) {}

  private static final CelCompiler COMPILER =
      CelCompilerFactory.standardCelCompilerBuilder()
          .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
          .addVar("self", SimpleType.DYN)
          .build();
  private static final CelRuntime RUNTIME = CelRuntimeFactory.standardCelRuntimeBuilder().build();

  private final JSONSchemaProps root;
  private final Map<String, CelRuntime.Program> programs = new HashMap<>();

  /**
   * Compiles every rule of {@code crd}'s single version.
   *
   * @throws IllegalArgumentException when a rule does not compile
   */
  OfflineSchemaValidator(CustomResourceDefinition crd) {
    this.root = crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema();
    for (String rule : rules(root)) {
      programs.computeIfAbsent(rule, OfflineSchemaValidator::compile);
    }
  }

  /** Every CEL rule in a schema, depth first. */
  static List<String> rules(JSONSchemaProps schema) {
    List<String> rules = new ArrayList<>();
    collectRules(schema, rules);
    return rules;
  }

  /** What the API server would reject in {@code object} (a whole custom resource). */
  List<Violation> validate(JsonNode object) {
    List<Violation> violations = new ArrayList<>();
    check(root, object, "", violations);
    return violations;
  }

  /** Evaluates one rule of this CRD with {@code self} bound to {@code self}. */
  boolean evaluate(String rule, JsonNode self) {
    CelRuntime.Program program = programs.get(rule);
    if (program == null) {
      throw new IllegalArgumentException("not a rule of this CRD: " + rule);
    }
    try {
      Object result = program.eval(Map.of("self", toCel(self)));
      if (!(result instanceof Boolean b)) {
        throw new IllegalStateException(rule + " evaluated to " + result + ", not a bool");
      }
      return b;
    } catch (CelEvaluationException e) {
      throw new IllegalStateException("cannot evaluate " + rule + ": " + e.getMessage(), e);
    }
  }

  private void check(JSONSchemaProps schema, JsonNode value, String path, List<Violation> out) {
    if (value == null || value.isMissingNode() || value.isNull()) {
      return;
    }
    if (!hasType(schema.getType(), value)) {
      out.add(new Violation(path, "must be of type " + schema.getType()));
      return;
    }
    if (value.isTextual()) {
      checkString(schema, value.asText(), path, out);
    }
    if (value.isIntegralNumber()
        && schema.getMinimum() != null
        && value.asLong() < schema.getMinimum()) {
      out.add(new Violation(path, "should be greater than or equal to " + schema.getMinimum()));
    }
    if (schema.getRequired() != null) {
      for (String name : schema.getRequired()) {
        if (!value.hasNonNull(name)) {
          out.add(new Violation(join(path, name), "Required value"));
        }
      }
    }
    if (schema.getProperties() != null) {
      schema
          .getProperties()
          .forEach((name, child) -> check(child, value.get(name), join(path, name), out));
    }
    if (schema.getItems() != null && schema.getItems().getSchema() != null) {
      for (int i = 0; i < value.size(); i++) {
        check(schema.getItems().getSchema(), value.get(i), path + "[" + i + "]", out);
      }
    }
    if (schema.getAdditionalProperties() != null
        && schema.getAdditionalProperties().getSchema() != null) {
      for (Iterator<Map.Entry<String, JsonNode>> it = value.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> entry = it.next();
        check(
            schema.getAdditionalProperties().getSchema(),
            entry.getValue(),
            path + "[" + entry.getKey() + "]",
            out);
      }
    }
    if (schema.getXKubernetesValidations() != null) {
      for (ValidationRule rule : schema.getXKubernetesValidations()) {
        if (!evaluate(rule.getRule(), value)) {
          out.add(new Violation(path, rule.getMessage()));
        }
      }
    }
  }

  private static void checkString(
      JSONSchemaProps schema, String text, String path, List<Violation> out) {
    // Kubernetes counts characters (runes), not UTF-16 units.
    long length = text.codePointCount(0, text.length());
    if (schema.getMaxLength() != null && length > schema.getMaxLength()) {
      out.add(new Violation(path, "may not be longer than " + schema.getMaxLength()));
    }
    if (schema.getMinLength() != null && length < schema.getMinLength()) {
      out.add(new Violation(path, "should be at least " + schema.getMinLength() + " chars long"));
    }
    if (schema.getPattern() != null && !Pattern.compile(schema.getPattern()).matcher(text).find()) {
      out.add(new Violation(path, "should match '" + schema.getPattern() + "'"));
    }
  }

  private static boolean hasType(String type, JsonNode value) {
    if (type == null) {
      return true;
    }
    return switch (type) {
      case "object" -> value.isObject();
      case "array" -> value.isArray();
      case "string" -> value.isTextual();
      case "integer" -> value.isIntegralNumber();
      case "number" -> value.isNumber();
      case "boolean" -> value.isBoolean();
      default -> throw new IllegalStateException("unexpected schema type " + type);
    };
  }

  private static String join(String path, String name) {
    return path.isEmpty() ? name : path + "." + name;
  }

  private static void collectRules(JSONSchemaProps schema, List<String> rules) {
    if (schema.getXKubernetesValidations() != null) {
      schema.getXKubernetesValidations().forEach(r -> rules.add(r.getRule()));
    }
    if (schema.getProperties() != null) {
      schema.getProperties().values().forEach(child -> collectRules(child, rules));
    }
    if (schema.getItems() != null && schema.getItems().getSchema() != null) {
      collectRules(schema.getItems().getSchema(), rules);
    }
    if (schema.getAdditionalProperties() != null
        && schema.getAdditionalProperties().getSchema() != null) {
      collectRules(schema.getAdditionalProperties().getSchema(), rules);
    }
  }

  private static CelRuntime.Program compile(String rule) {
    try {
      CelAbstractSyntaxTree ast = COMPILER.compile(rule).getAst();
      return RUNTIME.createProgram(ast);
    } catch (CelValidationException | CelEvaluationException e) {
      throw new IllegalArgumentException("rule does not compile: " + rule, e);
    }
  }

  /** JSON as CEL sees it: maps, lists, strings, int64, double and bool. */
  private static Object toCel(JsonNode node) {
    if (node.isObject()) {
      Map<String, Object> map = new LinkedHashMap<>();
      node.fields()
          .forEachRemaining(
              e -> {
                if (!e.getValue().isNull()) {
                  map.put(e.getKey(), toCel(e.getValue()));
                }
              });
      return map;
    }
    if (node.isArray()) {
      List<Object> list = new ArrayList<>();
      node.forEach(e -> list.add(toCel(e)));
      return list;
    }
    if (node.isIntegralNumber()) {
      return node.asLong();
    }
    if (node.isNumber()) {
      return node.asDouble();
    }
    if (node.isBoolean()) {
      return node.asBoolean();
    }
    return node.asText();
  }
}
