package io.jakri.agent.discovery;

import io.jakri.agent.model.ConfigurationSpec;
import java.util.LinkedHashMap;
import java.util.Map;

/** Turns a Configuration's {@code discoveryProperties} into name/value pairs for its handler. */
public interface PropertyResolver {

  /**
   * Resolves every property.
   *
   * @throws UnresolvableException naming the property (never its value) when one cannot be read
   */
  Map<String, String> resolve(ConfigurationSpec configuration) throws UnresolvableException;

  /**
   * Resolves every property to bytes (a Secret's or a ConfigMap's binaryData value is bytes); the
   * default is the UTF-8 encoding of {@link #resolve}.
   *
   * @throws UnresolvableException naming the property (never its value) when one cannot be read
   */
  default Map<String, byte[]> resolveBytes(ConfigurationSpec configuration)
      throws UnresolvableException {
    Map<String, byte[]> values = new LinkedHashMap<>();
    resolve(configuration)
        .forEach((k, v) -> values.put(k, v.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    return values;
  }

  /** A discovery property cannot be resolved; the message names it. */
  final class UnresolvableException extends Exception {
    private static final long serialVersionUID = 1L;

    public UnresolvableException(String message) {
      super(message);
    }
  }

  /** Standalone mode: literal values only; Secret and ConfigMap references are errors. */
  static PropertyResolver literalOnly() {
    return configuration -> {
      Map<String, String> values = new LinkedHashMap<>();
      for (ConfigurationSpec.DiscoveryProperty p : configuration.discoveryProperties()) {
        if (p.value().isPresent()) {
          values.put(p.name(), p.value().get());
        } else if (p.valueFrom().isPresent() && !p.valueFrom().get().optional()) {
          throw new UnresolvableException(
              "discoveryProperties "
                  + p.name()
                  + ": valueFrom needs an API server; standalone mode takes literal values only");
        }
      }
      return values;
    };
  }
}
