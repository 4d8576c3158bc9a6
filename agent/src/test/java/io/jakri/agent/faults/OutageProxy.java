package io.jakri.agent.faults;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP forwarder on a fixed local port that can be taken down (listening socket closed, every
 * forwarded connection cut: clients see connection refused) and brought up again on the same port.
 * It stands between an agent and the mock API server, so the server keeps its state across an
 * outage. Thread-safe; one thread per direction per connection (tests only).
 */
final class OutageProxy implements AutoCloseable {

  private final InetSocketAddress target;
  private final int port;
  private final List<Socket> open = new CopyOnWriteArrayList<>();
  private volatile ServerSocket listener;

  OutageProxy(String targetHost, int targetPort) throws IOException {
    this.target = new InetSocketAddress(targetHost, targetPort);
    ServerSocket probe = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.port = probe.getLocalPort();
    probe.close();
    up();
  }

  int port() {
    return port;
  }

  /** Starts listening on the proxy's port again. */
  synchronized void up() throws IOException {
    ServerSocket s = new ServerSocket();
    s.setReuseAddress(true);
    s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
    listener = s;
    Thread accept = new Thread(() -> acceptLoop(s), "outage-proxy-accept");
    accept.setDaemon(true);
    accept.start();
  }

  /** Stops listening and cuts every connection. */
  synchronized void down() throws IOException {
    ServerSocket s = listener;
    listener = null;
    if (s != null) {
      s.close();
    }
    for (Socket socket : open) {
      closeQuietly(socket);
    }
    open.clear();
  }

  private void acceptLoop(ServerSocket s) {
    while (!s.isClosed()) {
      try {
        Socket client = s.accept();
        Socket upstream = new Socket();
        upstream.connect(target, 5_000);
        open.add(client);
        open.add(upstream);
        pump(client, upstream);
        pump(upstream, client);
      } catch (IOException e) {
        // Closed by down(), or the target refused: the client sees its connection end.
      }
    }
  }

  private void pump(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              byte[] buffer = new byte[16 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  out.write(buffer, 0, n);
                  out.flush();
                }
              } catch (IOException e) {
                // One side went away.
              } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
              }
            },
            "outage-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // Already closed.
    }
  }

  @Override
  public void close() throws IOException {
    down();
  }
}
