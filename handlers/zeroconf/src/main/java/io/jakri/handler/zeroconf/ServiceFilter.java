package io.jakri.handler.zeroconf;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Decides which services a Configuration wants: instance {@code name} (case-insensitive, as DNS
 * compares names), {@code port}, and every {@code txtRecords} entry (key case-insensitive per RFC
 * 6763 §6.4, value exact; an empty value also matches a boolean attribute). Matching uses the TXT
 * attributes as published, before they are turned into properties. Immutable and thread-safe.
 */
public final class ServiceFilter {

  private final Optional<String> name;
  private final Optional<Integer> port;
  private final Map<String, String> txtRecords;

  public ServiceFilter(Optional<String> name, Optional<Integer> port, Map<String, String> txt) {
    this.name = Objects.requireNonNull(name, "name");
    this.port = Objects.requireNonNull(port, "port");
    this.txtRecords = Map.copyOf(txt);
  }

  public static ServiceFilter of(ZeroconfDetails details) {
    return new ServiceFilter(details.name(), details.port(), details.txtRecords());
  }

  public boolean matches(ServiceRecord service) {
    if (name.isPresent() && !name.get().equalsIgnoreCase(service.name())) {
      return false;
    }
    if (port.isPresent() && port.get() != service.port()) {
      return false;
    }
    for (Map.Entry<String, String> wanted : txtRecords.entrySet()) {
      boolean found =
          service.txt().stream()
              .anyMatch(
                  e ->
                      e.key().equalsIgnoreCase(wanted.getKey())
                          && e.value().orElse("").equals(wanted.getValue()));
      if (!found) {
        return false;
      }
    }
    return true;
  }
}
