package io.jakri.controller;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Forwards every TCP connection to {@code 127.0.0.1:listen} to {@code 127.0.0.1:target}, byte for
 * byte (TLS passes through untouched): an API server that appears on a port where nothing listened.
 */
final class TcpForwarder implements AutoCloseable {

  private final ServerSocket server;
  private final int target;
  private final List<Socket> open = new CopyOnWriteArrayList<>();

  TcpForwarder(int listen, int target) throws IOException {
    this.server = new ServerSocket(listen, 50, InetAddress.getLoopbackAddress());
    this.target = target;
    Thread accept = new Thread(this::accept, "forwarder-" + listen);
    accept.setDaemon(true);
    accept.start();
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket in = server.accept();
        Socket out = new Socket(InetAddress.getLoopbackAddress(), target);
        open.add(in);
        open.add(out);
        pump(in, out);
        pump(out, in);
      } catch (IOException e) {
        // closed, or the target refused: the client sees its connection end
      }
    }
  }

  private void pump(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                in.transferTo(out);
              } catch (IOException e) {
                // one side closed
              } finally {
                close(from);
                close(to);
              }
            },
            "forwarder-pump");
    t.setDaemon(true);
    t.start();
  }

  private static void close(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // already closed
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    open.forEach(TcpForwarder::close);
  }
}
