package io.jakri.agent.metrics;

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
 * Serves {@code /metrics} (Prometheus text), {@code /healthz} (the agent runs) and {@code /readyz}
 * (200 only while the kubelet is reachable and, in cluster mode, the watches have listed once;
 * otherwise 503 with the reason) on one port, from a caller-supplied executor.
 */
public final class HealthServer implements AutoCloseable {

  private final HttpServer server;

  /**
   * @param notReady empty when ready, else why not
   */
  public HealthServer(
      InetSocketAddress address,
      AgentMetrics metrics,
      Supplier<Optional<String>> notReady,
      Executor executor)
      throws IOException {
    try {
      server = HttpServer.create(address, 16);
    } catch (java.net.BindException e) {
      // The JDK's message is only "Address already in use": name the address the operator gave.
      java.net.BindException named =
          new java.net.BindException(
              "cannot listen on "
                  + address.getHostString()
                  + " port "
                  + address.getPort()
                  + ": "
                  + e.getMessage());
      named.initCause(e);
      throw named;
    }
    server.setExecutor(executor);
    server.createContext(
        "/metrics",
        ex -> reply(ex, 200, "text/plain; version=0.0.4; charset=utf-8", metrics.scrape()));
    server.createContext("/healthz", ex -> reply(ex, 200, "text/plain", "ok\n"));
    server.createContext(
        "/readyz",
        ex -> {
          Optional<String> reason = notReady.get();
          reply(
              ex,
              reason.isPresent() ? 503 : 200,
              "text/plain",
              reason.map(r -> "not ready: " + r + "\n").orElse("ok\n"));
        });
  }

  /**
   * Also serves {@code /instances}: the agent's Instances as {@code kubectl get instances -o yaml}
   * would show them (standalone mode, where there is no API server). Call before {@link #start}.
   */
  public void serveInstances(Supplier<String> yaml) {
    server.createContext(
        "/instances", ex -> reply(ex, 200, "application/yaml; charset=utf-8", yaml.get()));
  }

  public void start() {
    server.start();
  }

  /** The address actually bound. */
  public InetSocketAddress address() {
    return server.getAddress();
  }

  /** The port actually bound (useful with port 0). */
  public int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
  }

  private static void reply(HttpExchange ex, int code, String type, String body)
      throws IOException {
    try (ex) {
      if (!"GET".equals(ex.getRequestMethod()) && !"HEAD".equals(ex.getRequestMethod())) {
        ex.getResponseHeaders().add("Allow", "GET, HEAD");
        ex.sendResponseHeaders(405, -1);
        return;
      }
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().add("Content-Type", type);
      ex.sendResponseHeaders(code, "HEAD".equals(ex.getRequestMethod()) ? -1 : bytes.length);
      if (!"HEAD".equals(ex.getRequestMethod())) {
        try (OutputStream out = ex.getResponseBody()) {
          out.write(bytes);
        }
      }
    }
  }
}
