package io.jakri.handler.zeroconf;

import java.io.IOException;
import java.net.InetAddress;
import java.util.List;

/** Chooses the local addresses to browse on. */
interface AddressSelector {

  /**
   * The addresses for the {@code interfaces} setting: each entry is an interface name or a local
   * address literal; an empty list means every suitable interface. Entries that match nothing are
   * skipped and described in {@link Selection#skipped()}.
   */
  Selection select(List<String> interfaces) throws IOException;

  /** Chosen addresses (no duplicates) and a message per entry that gave none. */
  record Selection(List<InetAddress> addresses, List<String> skipped) {
    public Selection {
      addresses = List.copyOf(addresses);
      skipped = List.copyOf(skipped);
    }
  }
}
