package io.jakri.controller.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * Serves {@code /metrics} (Prometheus text), {@code /healthz} (the controller runs) and {@code
 * /readyz} (200 once every informer has listed, else 503 with the reason, e.g. the last list
 * failure) on one port, from a caller-supplied executor.
 */
public final class MetricsServer implements AutoCloseable {

  private final HttpServer server;

  public MetricsServer(
      InetSocketAddress address,
      ControllerMetrics metrics,
      Supplier<Optional<String>> notReady,
      Executor executor)
      throws IOException {
    server = HttpServer.create(address, 16);
    server.setExecutor(executor);
    server.createContext(
        "/metrics",
        ex -> reply(ex, 200, "text/plain; version=0.0.4; charset=utf-8", metrics.scrape()));
    server.createContext("/healthz", ex -> reply(ex, 200, "text/plain", "ok\n"));
    server.createContext(
        "/readyz",
        ex -> {
          Optional<String> why = notReady.get();
          reply(
              ex,
              why.isEmpty() ? 200 : 503,
              "text/plain; charset=utf-8",
              why.map(w -> "not ready: " + w + "\n").orElse("ok\n"));
        });
  }

  public void start() {
    server.start();
  }

  /** The port actually bound (useful with port 0). */
  public int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
  }

  private static void reply(HttpExchange ex, int status, String type, String body)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", type);
    ex.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(bytes);
    }
  }
}
