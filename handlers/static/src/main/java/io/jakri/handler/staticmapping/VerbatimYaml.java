package io.jakri.handler.staticmapping;

import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.SafeYaml;
import java.io.StringReader;
import java.util.Map;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.nodes.Tag;
import org.yaml.snakeyaml.representer.Representer;
import org.yaml.snakeyaml.resolver.Resolver;

/**
 * Reads YAML keeping every plain scalar as the text written: {@code instanceID: 0001} stays {@code
 * "0001"} (YAML 1.1 would read the octal number 1), {@code PORT: 012} stays {@code "012"} and
 * {@code ENABLED: yes} stays {@code "yes"}. Only {@code null}/{@code ~}/empty values and merge keys
 * keep their YAML meaning.
 *
 * <p>The text is first checked by {@link SafeYaml}, so the same limits and error messages apply;
 * the second parse uses the same limits. Thread-safe: every call builds its own parser.
 */
final class VerbatimYaml {

  private VerbatimYaml() {}

  /** Parses one YAML mapping with scalars kept as written; empty text gives an empty map. */
  static Map<String, Object> loadMap(String text) throws InvalidDetailsException {
    Map<String, Object> checked = SafeYaml.loadMap(text);
    if (checked.isEmpty()) {
      return checked;
    }
    Object verbatim = yaml().load(new StringReader(text));
    if (!(verbatim instanceof Map<?, ?> map)) {
      // Cannot happen once SafeYaml accepted a mapping; fall back to its reading.
      return checked;
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> result = (Map<String, Object>) map;
    return result;
  }

  private static Yaml yaml() {
    // Mirrors SafeYaml's limits: it has already accepted this text, so they are a second fence.
    LoaderOptions options = new LoaderOptions();
    options.setMaxAliasesForCollections(10);
    options.setAllowRecursiveKeys(false);
    options.setNestingDepthLimit(20);
    options.setCodePointLimit(SafeYaml.MAX_CODE_POINTS);
    options.setAllowDuplicateKeys(false);
    DumperOptions dumperOptions = new DumperOptions();
    return new Yaml(
        new SafeConstructor(options),
        new Representer(dumperOptions),
        dumperOptions,
        options,
        new TextResolver());
  }

  /** Resolves only nulls and merge keys; every other plain scalar is a string. */
  private static final class TextResolver extends Resolver {
    @Override
    protected void addImplicitResolvers() {
      addImplicitResolver(Tag.NULL, NULL, "~nN\0");
      addImplicitResolver(Tag.NULL, EMPTY, null);
      addImplicitResolver(Tag.MERGE, MERGE, "<");
    }
  }
}
