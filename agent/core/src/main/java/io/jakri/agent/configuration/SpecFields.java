package io.jakri.agent.configuration;

import static io.jakri.agent.configuration.Fields.map;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The fields of a Configuration's {@code spec} beside its discovery handler: {@code capacity},
 * {@code brokerProperties} and {@code brokerSpec}, each read into its value or an {@link Invalid}
 * naming the field, for {@link ConfigurationParser}.
 */
final class SpecFields {

  private SpecFields() {}

  /** {@code spec.capacity}: 1 when absent, else 1 to {@link ConfigurationParser#MAX_CAPACITY}. */
  static int capacity(Object value) throws Invalid {
    if (value == null) {
      return 1;
    }
    if (value instanceof Integer i) {
      if (i < 1) {
        throw new Invalid("spec.capacity must be at least 1 but is " + i);
      }
      if (i > ConfigurationParser.MAX_CAPACITY) {
        throw new Invalid(
            "spec.capacity must be at most " + ConfigurationParser.MAX_CAPACITY + " but is " + i);
      }
      return i;
    }
    if (value instanceof Long || value instanceof BigInteger) {
      BigInteger big = new BigInteger(value.toString());
      throw new Invalid(
          "spec.capacity "
              + big
              + " is too large: it must be at most "
              + ConfigurationParser.MAX_CAPACITY
              + (big.signum() < 0 ? " and at least 1" : ""));
    }
    throw new Invalid("spec.capacity must be an integer");
  }

  /**
   * The kind of {@code spec.brokerSpec} ({@code brokerPodSpec} or {@code brokerJobSpec}); empty
   * when there is none.
   */
  static Optional<String> brokerKind(Object value) throws Invalid {
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

  /**
   * {@code spec.brokerProperties} as strings (an absent value as ""); nested values are not, nor,
   * when {@code strict}, numbers and booleans (the CRD's type is string).
   */
  static Map<String, String> brokerProperties(Object value, boolean strict) throws Invalid {
    if (value == null) {
      return Map.of();
    }
    Map<String, Object> raw = map(value, "spec.brokerProperties");
    Map<String, String> result = new LinkedHashMap<>();
    List<String> problems = new ArrayList<>();
    for (Map.Entry<String, Object> e : raw.entrySet()) {
      Object v = e.getValue();
      if (v instanceof Map || v instanceof List) {
        problems.add("spec.brokerProperties." + e.getKey() + " must be a string");
      } else if (strict && (v instanceof Number || v instanceof Boolean)) {
        // The CRD says string: the API server refuses 8080 and true here, so validate does too.
        problems.add(
            "spec.brokerProperties."
                + e.getKey()
                + " must be a string but is "
                + v
                + Fields.quoteHint(v));
      } else {
        result.put(e.getKey(), v == null ? "" : String.valueOf(v));
      }
    }
    if (!problems.isEmpty()) {
      throw new Invalid(problems);
    }
    return result;
  }
}
