package io.jakri.charts;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.stream.Stream;
import org.yaml.snakeyaml.Yaml;

/**
 * The objects {@code helm template} renders from {@code charts/jakri} for one set of values files,
 * parsed into plain maps. Immutable; each instance renders once in {@link #render}.
 */
record RenderedChart(List<Map<String, Object>> objects) {

  static final Path CHART = Path.of("jakri");
  static final Path VALUES = Path.of("src/test/resources/values");
  static final String NAMESPACE = "jakri";
  static final String RELEASE = "jakri";

  /** Renders the chart as release "jakri" in namespace "jakri" with the given values files. */
  static RenderedChart render(String... valuesFiles) {
    return render(NAMESPACE, List.of(valuesFiles), List.of());
  }

  /**
   * Renders the chart as release "jakri" in {@code namespace} with values files (under {@link
   * #VALUES}) and {@code --set} pairs ({@code key, value, key, value, ...}).
   */
  static RenderedChart render(String namespace, List<String> valuesFiles, List<String> setValues) {
    return parse(template(CHART, namespace, valuesFiles, setValues).call());
  }

  private static TemplateCommand template(
      Path chart, String namespace, List<String> valuesFiles, List<String> setValues) {
    TemplateCommand template =
        new Helm(chart).template().withName(RELEASE).withNamespace(namespace);
    for (String file : valuesFiles) {
      template = template.withValuesFile(VALUES.resolve(file));
    }
    for (int i = 0; i + 1 < setValues.size(); i += 2) {
      template = template.set(setValues.get(i), setValues.get(i + 1));
    }
    return template;
  }

  /**
   * Renders a copy of the chart (made under {@code workDir}) in which the {@code helm.sh/hook*}
   * annotations are renamed to {@code test.helm.sh/hook*}. helm-java's template returns only the
   * release manifest, without hooks; renaming the annotation makes Helm render hook objects as
   * ordinary ones, and tests read the hook settings from the renamed keys.
   */
  static RenderedChart renderWithHooks(Path workDir, String... setValues) throws IOException {
    return renderWithHooks(workDir, NAMESPACE, List.of(), List.of(setValues));
  }

  /** {@link #renderWithHooks(Path, String...)} in {@code namespace}, with values files too. */
  static RenderedChart renderWithHooks(
      Path workDir, String namespace, List<String> valuesFiles, List<String> setValues)
      throws IOException {
    Path copy = workDir.resolve("jakri");
    try (Stream<Path> files = Files.walk(CHART)) {
      for (Path from : files.toList()) {
        Path to = copy.resolve(CHART.relativize(from).toString());
        if (Files.isDirectory(from)) {
          Files.createDirectories(to);
        } else {
          Files.writeString(to, Files.readString(from).replace("helm.sh/hook", HOOK));
        }
      }
    }
    return parse(template(copy, namespace, valuesFiles, setValues).call());
  }

  /** The renamed {@code helm.sh/hook} annotation key in {@link #renderWithHooks} output. */
  static final String HOOK = "test.helm.sh/hook";

  static RenderedChart parse(String yaml) {
    List<Map<String, Object>> objects = new ArrayList<>();
    for (Object document : new Yaml().loadAll(yaml)) {
      if (document != null) {
        objects.add(map(document));
      }
    }
    return new RenderedChart(List.copyOf(objects));
  }

  List<Map<String, Object>> ofKind(String kind) {
    return objects.stream().filter(o -> kind.equals(o.get("kind"))).toList();
  }

  Map<String, Object> one(String kind, String name) {
    return ofKind(kind).stream()
        .filter(o -> name.equals(get(o, "metadata", "name")))
        .findFirst()
        .orElseThrow(() -> new NoSuchElementException(kind + " " + name + " not rendered"));
  }

  /** Follows map keys (String) and list indexes (Integer) from {@code root}. */
  static Object get(Object root, Object... path) {
    Object at = root;
    for (Object step : path) {
      if (step instanceof Integer i) {
        at = ((List<?>) at).get(i);
      } else {
        at = at == null ? null : ((Map<?, ?>) at).get(step);
      }
    }
    return at;
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object o) {
    return (Map<String, Object>) o;
  }

  @SuppressWarnings("unchecked")
  static List<String> strings(Object o) {
    return o == null ? List.of() : (List<String>) o;
  }

  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> maps(Object o) {
    return o == null ? List.of() : (List<Map<String, Object>>) o;
  }
}
