package io.jakri.handler.coap;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One link of an RFC 6690 link-format document: its target and its parameters. A parameter may
 * appear several times and {@code rt}, {@code if} and {@code rel} hold space-separated values (RFC
 * 6690 §3.1, §3.2): every value is one entry of the parameter's list, in document order.
 *
 * @param target the URI reference between {@code <} and {@code >}, as written
 * @param params parameter name (lower case) → values; a parameter without a value maps to ""
 */
public record Link(String target, Map<String, List<String>> params) {

  public Link {
    Objects.requireNonNull(target, "target");
    Map<String, List<String>> copy = new java.util.TreeMap<>();
    params.forEach((k, v) -> copy.put(k, List.copyOf(v)));
    params = java.util.Collections.unmodifiableMap(copy);
  }

  /** The values of a parameter, empty when absent. */
  public List<String> values(String name) {
    return params.getOrDefault(name, List.of());
  }

  /** The resource types ({@code rt}). */
  public List<String> resourceTypes() {
    return values("rt");
  }

  /** The interface descriptions ({@code if}). */
  public List<String> interfaces() {
    return values("if");
  }
}
