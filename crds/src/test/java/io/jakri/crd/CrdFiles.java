package io.jakri.crd;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.client.CustomResource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.AnnotatedType;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The build's view of the CRD YAML: what the fabric8 CRD generator wrote for the model, how that
 * becomes the committed file, and where the committed and bundled copies live. Paths come from
 * system properties set by surefire in {@code crds/pom.xml} (falling back to paths relative to the
 * module directory, the working directory of a test run).
 *
 * <p>Two post-processing steps, both driven by annotations on the model:
 *
 * <ul>
 *   <li>the generator sorts printer columns by JSON path, but {@code kubectl get instances} must
 *       print {@code NAME CONFIG SHARED NODES AGE}. So every printer column is declared with {@link
 *       AdditionalPrinterColumn} on the resource class, in display order, and {@link #expectedYaml}
 *       puts the generated columns in that order;
 *   <li>the generator (7.5) has no annotation for the server-side-apply markers, so a field
 *       annotated {@link ListType} or {@link MapType} gets {@code x-kubernetes-list-type} or {@code
 *       x-kubernetes-map-type} with the annotation's value added to its generated schema.
 * </ul>
 *
 * Nothing else is changed.
 */
final class CrdFiles {

  /** The command that rewrites the committed YAML from the model (then run the build again). */
  static final String REFRESH_COMMAND =
      "mvn -B -pl crds verify -Djakri.crds.update=true -Dtest=CommittedCrdYamlTest";

  /** Every CRD this module defines, by CRD name, with the class it is generated from. */
  static final Map<String, Class<? extends CustomResource<?, ?>>> MODEL =
      Map.of(
          Crds.CONFIGURATION_CRD_NAME, Configuration.class,
          Crds.INSTANCE_CRD_NAME, Instance.class);

  static final YAMLMapper YAML =
      new YAMLMapper(
          YAMLFactory.builder()
              .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
              .enable(YAMLGenerator.Feature.ALWAYS_QUOTE_NUMBERS_AS_STRINGS)
              .enable(YAMLGenerator.Feature.INDENT_ARRAYS_WITH_INDICATOR)
              .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
              .disable(YAMLGenerator.Feature.SPLIT_LINES)
              .build());

  private CrdFiles() {}

  static Path generatedDir() {
    return dir("jakri.crds.generated", "target/crd-generator");
  }

  static Path committedDir() {
    return dir("jakri.crds.committed", ".");
  }

  static Path bundledDir() {
    return dir("jakri.crds.bundled", "target/classes/io/jakri/crd");
  }

  static boolean updateRequested() {
    return Boolean.getBoolean("jakri.crds.update");
  }

  static Path committed(String crdName) {
    return committedDir().resolve(Crds.yamlFileName(crdName));
  }

  static Path bundled(String crdName) {
    return bundledDir().resolve(Crds.yamlFileName(crdName));
  }

  /** The committed YAML parsed into a tree. */
  static ObjectNode readCommitted(String crdName) {
    return read(committed(crdName));
  }

  /**
   * The text the committed file must have: a header and the generator's output for {@code crdName}
   * with its printer columns in declaration order.
   */
  static String expectedYaml(String crdName) {
    Class<? extends CustomResource<?, ?>> type = MODEL.get(crdName);
    ObjectNode crd = read(generatedDir().resolve(crdName + "-v1.yml"));
    orderPrinterColumns(crd, type);
    addApplyMarkers(crd, type);
    try {
      return "# Generated from "
          + type.getName()
          + " by fabric8's crd-generator-maven-plugin (crds/pom.xml). Do not edit.\n"
          + "# After changing the model, refresh with: "
          + REFRESH_COMMAND
          + "\n"
          + YAML.writeValueAsString(crd);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static ObjectNode parse(String yaml) {
    try {
      return (ObjectNode) YAML.readTree(yaml);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static ObjectNode read(Path file) {
    try {
      return parse(Files.readString(file));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file.toAbsolutePath(), e);
    }
  }

  /**
   * The first place where two trees differ, as a JSON pointer with both values, or empty when they
   * are equal. Object member order is ignored, array order is not.
   */
  static Optional<String> firstDifference(JsonNode expected, JsonNode actual) {
    return difference("", expected, actual);
  }

  private static Optional<String> difference(String at, JsonNode expected, JsonNode actual) {
    if (expected.equals(actual)) {
      return Optional.empty();
    }
    if (expected.isObject() && actual.isObject()) {
      Set<String> names = new LinkedHashSet<>();
      expected.fieldNames().forEachRemaining(names::add);
      actual.fieldNames().forEachRemaining(names::add);
      for (String name : names) {
        Optional<String> d = difference(at + "/" + name, expected.path(name), actual.path(name));
        if (d.isPresent()) {
          return d;
        }
      }
    }
    if (expected.isArray() && actual.isArray() && expected.size() == actual.size()) {
      for (int i = 0; i < expected.size(); i++) {
        Optional<String> d = difference(at + "/" + i, expected.get(i), actual.get(i));
        if (d.isPresent()) {
          return d;
        }
      }
    }
    return Optional.of(
        (at.isEmpty() ? "/" : at)
            + ": generated "
            + render(expected)
            + ", committed "
            + render(actual));
  }

  private static String render(JsonNode node) {
    String text = node.isMissingNode() ? "(absent)" : node.toString();
    return text.length() > 200 ? text.substring(0, 200) + "..." : text;
  }

  private static void orderPrinterColumns(ObjectNode crd, Class<?> type) {
    List<String> order =
        Arrays.stream(type.getAnnotationsByType(AdditionalPrinterColumn.class))
            .map(AdditionalPrinterColumn::name)
            .toList();
    for (JsonNode version : crd.path("spec").path("versions")) {
      JsonNode columns = version.path("additionalPrinterColumns");
      if (!columns.isArray()) {
        continue;
      }
      List<JsonNode> sorted = new ArrayList<>();
      for (Iterator<JsonNode> it = columns.elements(); it.hasNext(); ) {
        JsonNode column = it.next();
        if (!order.contains(column.path("name").asText())) {
          throw new IllegalStateException(
              "printer column "
                  + column.path("name").asText()
                  + " is not declared with @AdditionalPrinterColumn on "
                  + type.getName()
                  + "; declare every column there, in the order kubectl should print them");
        }
        sorted.add(column);
      }
      sorted.sort((a, b) -> order.indexOf(name(a)) - order.indexOf(name(b)));
      ArrayNode array = (ArrayNode) columns;
      array.removeAll();
      array.addAll(sorted);
    }
  }

  /**
   * Adds {@code x-kubernetes-list-type} / {@code x-kubernetes-map-type} to the schema of every
   * model field annotated with {@link ListType} / {@link MapType}, walking the spec and status
   * classes and the model classes they contain (directly, as list items or as map values).
   */
  static void addApplyMarkers(ObjectNode crd, Class<?> type) {
    Type[] specAndStatus =
        ((ParameterizedType) type.getGenericSuperclass()).getActualTypeArguments();
    for (JsonNode version : crd.path("spec").path("versions")) {
      JsonNode root = version.path("schema").path("openAPIV3Schema").path("properties");
      markFields((Class<?>) specAndStatus[0], root.path("spec"));
      markFields((Class<?>) specAndStatus[1], root.path("status"));
    }
  }

  private static void markFields(Class<?> model, JsonNode schema) {
    if (!model.getPackageName().equals(Crds.class.getPackageName()) || !schema.isObject()) {
      return;
    }
    for (Field field : model.getDeclaredFields()) {
      if (Modifier.isStatic(field.getModifiers())) {
        continue;
      }
      JsonProperty renamed = field.getAnnotation(JsonProperty.class);
      String name =
          renamed != null && !renamed.value().isEmpty() ? renamed.value() : field.getName();
      JsonNode property = schema.path("properties").path(name);
      if (!property.isObject()) {
        continue;
      }
      ListType listType = field.getAnnotation(ListType.class);
      if (listType != null) {
        ((ObjectNode) property).put("x-kubernetes-list-type", listType.value());
      }
      MapType mapType = field.getAnnotation(MapType.class);
      if (mapType != null) {
        ((ObjectNode) property).put("x-kubernetes-map-type", mapType.value());
      }
      markNested(field.getGenericType(), property);
    }
  }

  private static void markNested(Type type, JsonNode schema) {
    if (type instanceof Class<?> c) {
      markFields(c, schema);
    } else if (type instanceof ParameterizedType p && p.getRawType() instanceof Class<?> raw) {
      Type[] args = p.getActualTypeArguments();
      if (List.class.isAssignableFrom(raw)) {
        markNested(args[0], schema.path("items"));
      } else if (Map.class.isAssignableFrom(raw)) {
        markNested(args[1], schema.path("additionalProperties"));
      }
    } else if (type instanceof AnnotatedType a) {
      markNested(a.getType(), schema);
    }
  }

  private static String name(JsonNode column) {
    return column.path("name").asText();
  }

  private static Path dir(String property, String fallback) {
    return Path.of(System.getProperty(property, fallback));
  }
}
