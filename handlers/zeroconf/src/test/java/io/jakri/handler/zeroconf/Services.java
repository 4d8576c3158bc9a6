package io.jakri.handler.zeroconf;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Test data: service records as a resolver would produce them. */
final class Services {

  static final ServiceType HTTP = new ServiceType("http", "tcp");

  private Services() {}

  static ServiceRecord service(String name, int port, TxtEntry... txt) {
    return new ServiceRecord(
        name, HTTP, "local", Optional.of("box.local"), List.of("10.0.0.7"), port, List.of(txt));
  }

  static ServiceRecord withTxt(ServiceRecord s, List<TxtEntry> txt) {
    return new ServiceRecord(
        s.name(), s.type(), s.domain(), s.host(), s.addresses(), s.port(), txt);
  }

  static ServiceRecord withAddresses(ServiceRecord s, String... addresses) {
    return new ServiceRecord(
        s.name(), s.type(), s.domain(), s.host(), List.of(addresses), s.port(), s.txt());
  }

  static List<TxtEntry> numbered(int count) {
    List<TxtEntry> txt = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      txt.add(TxtEntry.of("k" + i, "v" + i));
    }
    return txt;
  }
}
