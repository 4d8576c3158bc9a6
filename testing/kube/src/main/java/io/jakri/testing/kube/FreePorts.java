package io.jakri.testing.kube;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/** Free TCP ports for the peers a test or the bench starts. */
public final class FreePorts {

  private FreePorts() {}

  /**
   * {@code n} distinct free ports. All are held open until each is known: a port closed and asked
   * for again can come back (seen: etcd's client port handed to the API server as well).
   */
  public static int[] take(int n) throws IOException {
    List<ServerSocket> held = new ArrayList<>();
    try {
      int[] ports = new int[n];
      for (int i = 0; i < n; i++) {
        ServerSocket socket = new ServerSocket(0);
        held.add(socket);
        ports[i] = socket.getLocalPort();
      }
      return ports;
    } finally {
      for (ServerSocket socket : held) {
        socket.close();
      }
    }
  }

  /** One free port. */
  public static int one() throws IOException {
    return take(1)[0];
  }
}
