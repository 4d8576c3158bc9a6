package io.jakri.broker.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.jakri.broker.device.DeviceEnv;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executor;

/**
 * The broker's HTTP endpoint: {@code GET /device} returns the devices as JSON ({@link DeviceJson}),
 * {@code GET /healthz} returns {@code ok}. {@code HEAD} works on both; other methods get 405, other
 * paths 404. The device env never changes while a container runs, so the body is rendered once.
 *
 * <p>Lifecycle: the constructor binds the port, {@link #start()} starts serving, {@link #close()}
 * stops (idempotent). Requests are handled on the given executor; the server is thread-safe.
 */
public final class DeviceServer implements AutoCloseable {

  private static final String ALLOWED = "GET, HEAD";

  private final HttpServer server;
  private final byte[] deviceJson;
  private final Object lock = new Object();
  private boolean stopped;

  /**
   * Binds {@code address} (port 0 picks a free port).
   *
   * @param executor runs the request handlers; owned by the caller, who shuts it down after {@link
   *     #close()}
   * @throws IOException when the address cannot be bound
   */
  public DeviceServer(InetSocketAddress address, DeviceEnv devices, Executor executor)
      throws IOException {
    this.deviceJson = DeviceJson.render(devices).getBytes(StandardCharsets.UTF_8);
    this.server = HttpServer.create(address, 16);
    server.setExecutor(executor);
    // One root context dispatching on the exact path: contexts match by prefix.
    server.createContext("/", this::handle);
  }

  /** Starts serving. Call once. */
  public void start() {
    server.start();
  }

  /** The bound port. */
  public int port() {
    return server.getAddress().getPort();
  }

  /**
   * Stops serving at once (responses are tiny and static, nothing is worth waiting for).
   * Idempotent.
   */
  @Override
  public void close() {
    synchronized (lock) {
      if (stopped) {
        return;
      }
      stopped = true;
    }
    server.stop(0);
  }

  private void handle(HttpExchange exchange) throws IOException {
    // Closing the exchange also discards any request body (none is expected).
    try (exchange) {
      String path = exchange.getRequestURI().getRawPath();
      exchange.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
      exchange.getResponseHeaders().set("Cache-Control", "no-store");
      switch (path) {
        case "/device" -> respond(exchange, "application/json; charset=utf-8", deviceJson);
        case "/healthz" ->
            respond(exchange, "text/plain; charset=utf-8", "ok\n".getBytes(StandardCharsets.UTF_8));
        default ->
            send(
                exchange,
                404,
                "text/plain; charset=utf-8",
                "not found: try /device or /healthz\n".getBytes(StandardCharsets.UTF_8));
      }
    }
  }

  private static void respond(HttpExchange exchange, String contentType, byte[] body)
      throws IOException {
    String method = exchange.getRequestMethod();
    if (!method.equals("GET") && !method.equals("HEAD")) {
      exchange.getResponseHeaders().set("Allow", ALLOWED);
      send(
          exchange,
          405,
          "text/plain; charset=utf-8",
          "method not allowed\n".getBytes(StandardCharsets.UTF_8));
      return;
    }
    send(exchange, 200, contentType, body);
  }

  private static void send(HttpExchange exchange, int status, String contentType, byte[] body)
      throws IOException {
    exchange.getResponseHeaders().set("Content-Type", contentType);
    if (exchange.getRequestMethod().equals("HEAD")) {
      exchange.getResponseHeaders().set("Content-Length", Integer.toString(body.length));
      exchange.sendResponseHeaders(status, -1);
      return;
    }
    exchange.sendResponseHeaders(status, body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }
}
