package io.jakri.agent.discovery;

import io.jakri.agent.configuration.ConfigurationSpec;
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
