package io.jakri.controller.admission;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The validating admission webhook for Configurations: HTTPS on its own port, {@code POST
 * /validate} with an {@code admission.k8s.io/v1} AdmissionReview, answered with every problem
 * {@code validate} would report (one per line of the refusal's message) and its warnings as the
 * response's warnings (kubectl prints them). Deletes and objects that are not Configurations are
 * allowed untouched. Requests are answered by two threads of its own.
 */
public final class AdmissionServer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(AdmissionServer.class);

  /** Largest AdmissionReview read: an object is at most 1.5 MiB in etcd, old and new both sent. */
  static final int MAX_BODY = 4 * 1024 * 1024;

  /** The API server keeps at most this many warnings' worth; longer ones are cut. */
  private static final int MAX_WARNING = 1024;

  /** Reviews one Configuration object; {@code where} starts each message. */
  public interface Reviewer {
    Verdict review(String where, Object configuration);
  }

  /** What a review found: problems refuse the object, warnings do not. */
  public record Verdict(List<String> problems, List<String> warnings) {
    public Verdict {
      problems = List.copyOf(problems);
      warnings = List.copyOf(warnings);
    }
  }

  private final HttpsServer server;
  private final ExecutorService threads;
  private final ObjectMapper json = new ObjectMapper();
  private final Reviewer reviewer;

  public AdmissionServer(InetSocketAddress address, WebhookTls tls, Reviewer reviewer)
      throws IOException {
    this(address, tls.sslContext(), reviewer);
  }

  AdmissionServer(InetSocketAddress address, javax.net.ssl.SSLContext tls, Reviewer reviewer)
      throws IOException {
    this.reviewer = reviewer;
    this.server = HttpsServer.create(address, 16);
    server.setHttpsConfigurator(new HttpsConfigurator(tls));
    server.createContext("/validate", this::handle);
    this.threads =
        Executors.newFixedThreadPool(
            2,
            r -> {
              Thread t = new Thread(r, "jakri-admission");
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(threads);
  }

  public void start() {
    server.start();
  }

  /** The port served (the one asked for, or the one chosen for port 0). */
  public int port() {
    return server.getAddress().getPort();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (!"POST".equals(exchange.getRequestMethod())) {
        reply(exchange, 405, "{\"error\":\"POST an admission.k8s.io/v1 AdmissionReview\"}");
        return;
      }
      byte[] body;
      try (InputStream in = exchange.getRequestBody()) {
        body = in.readNBytes(MAX_BODY + 1);
      }
      if (body.length > MAX_BODY) {
        reply(exchange, 413, "{\"error\":\"an AdmissionReview is at most 4 MiB\"}");
        return;
      }
      JsonNode review;
      try {
        review = json.readTree(body);
      } catch (IOException e) {
        reply(exchange, 400, "{\"error\":\"not JSON\"}");
        return;
      }
      JsonNode request = review == null ? null : review.get("request");
      if (request == null || !request.hasNonNull("uid")) {
        reply(exchange, 400, "{\"error\":\"not an AdmissionReview with a request and its uid\"}");
        return;
      }
      reply(exchange, 200, json.writeValueAsString(answer(review, request)));
    } catch (RuntimeException e) {
      LOG.warn("admission request failed: {}", e.toString());
      reply(exchange, 500, "{\"error\":\"internal error\"}");
    }
  }

  private ObjectNode answer(JsonNode review, JsonNode request) {
    ObjectNode response = json.createObjectNode();
    response.put("uid", request.get("uid").asText());
    JsonNode object = request.get("object");
    JsonNode kind = request.path("kind");
    boolean configuration =
        "akri.sh".equals(kind.path("group").asText())
            && "Configuration".equals(kind.path("kind").asText());
    if (object == null || object.isNull() || !configuration) {
      response.put("allowed", true); // a delete, or something this webhook was not meant for
    } else {
      String name = object.path("metadata").path("name").asText("");
      String namespace = request.path("namespace").asText("");
      String where =
          "configuration "
              + (namespace.isEmpty() ? "" : namespace + "/")
              + (name.isEmpty() ? "(generated name)" : name);
      Verdict verdict = reviewer.review(where, json.convertValue(object, Map.class));
      response.put("allowed", verdict.problems().isEmpty());
      if (!verdict.problems().isEmpty()) {
        ObjectNode status = response.putObject("status");
        // No reason "Invalid": kubectl would then print only the details' causes, and there are
        // none, so "The request is invalid" would hide every problem (seen with kubectl 1.20).
        status.put("code", 422);
        status.put("message", message(verdict.problems()));
        LOG.info(
            "refused {} {}: {}",
            request.path("operation").asText(),
            where,
            String.join("; ", verdict.problems()));
      }
      if (!verdict.warnings().isEmpty()) {
        ArrayNode warnings = response.putArray("warnings");
        for (String w : verdict.warnings()) {
          warnings.add(w.length() > MAX_WARNING ? w.substring(0, MAX_WARNING) + "…" : w);
        }
      }
    }
    ObjectNode answer = json.createObjectNode();
    answer.put("apiVersion", review.path("apiVersion").asText("admission.k8s.io/v1"));
    answer.put("kind", "AdmissionReview");
    answer.set("response", response);
    return answer;
  }

  /** One problem as it is; several as a count and one line each. */
  static String message(List<String> problems) {
    if (problems.size() == 1) {
      return problems.get(0);
    }
    StringBuilder text = new StringBuilder(problems.size() + " problems:");
    for (String p : problems) {
      text.append("\n- ").append(p);
    }
    return text.toString();
  }

  private static void reply(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
