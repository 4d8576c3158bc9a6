package io.jakri.handler.zeroconf;

import java.io.IOException;
import java.net.InetAddress;
import java.util.List;

/** Chooses the local addresses to browse on. */
interface AddressSelector {

  /**
   * The addresses for the {@code interfaces} setting: each entry is an interface name or a local
   * address literal; an empty list means every suitable interface. Entries that match nothing are
   * skipped and described in {@link Selection#problems()}, as are chosen interfaces that share an
   * IPv4 address with another.
   */
  Selection select(List<String> interfaces) throws IOException;

  /**
   * Chosen addresses (no duplicates) and a message per entry that gave none or per chosen interface
   * whose IPv4 address another interface carries too.
   */
  record Selection(List<InetAddress> addresses, List<String> problems) {
    public Selection {
      addresses = List.copyOf(addresses);
      problems = List.copyOf(problems);
    }
  }
}
