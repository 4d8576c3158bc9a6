package io.jakri.controller;

import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts every HTTP request the controller's client sends to the API server, by method (GET, POST,
 * PUT, PATCH, DELETE), watches and informer LISTs included. Installed as a fabric8 {@link
 * Interceptor} on the controller's own client, so nothing can bypass it. Thread-safe.
 */
public final class ApiCalls {

  private final Map<String, LongAdder> byMethod = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> unanswered = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> posts = new ConcurrentHashMap<>();

  /** The interceptor to add to the controller's HTTP client builder. */
  public Interceptor interceptor() {
    return new Interceptor() {
      @Override
      public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
        byMethod.computeIfAbsent(request.method(), m -> new LongAdder()).increment();
      }

      @Override
      public void after(
          HttpRequest request,
          HttpResponse<?> response,
          AsyncBody.Consumer<List<ByteBuffer>> consumer) {
        if (response.code() == 429 || response.code() >= 500) {
          unanswered.computeIfAbsent(request.method(), m -> new LongAdder()).increment();
        }
        if ("POST".equals(request.method())) {
          posts
              .computeIfAbsent(collection(request) + " " + response.code(), k -> new LongAdder())
              .increment();
        }
      }

      @Override
      public void afterConnectionFailure(HttpRequest request, Throwable failure) {
        unanswered.computeIfAbsent(request.method(), m -> new LongAdder()).increment();
      }
    };
  }

  /**
   * Requests of one method that got no answer (a connection failure) or a 429 or 5xx: attempts the
   * client may send again on its own, so a repeat of them is not the controller's doing.
   */
  public long unanswered(String method) {
    LongAdder n = unanswered.get(method);
    return n == null ? 0 : n.sum();
  }

  /**
   * Answered POSTs by collection and status code, e.g. {@code "pods 201"}, {@code "services 409"}
   * (a create of something that exists), sorted.
   */
  public Map<String, Long> posts() {
    Map<String, Long> copy = new TreeMap<>();
    posts.forEach((k, n) -> copy.put(k, n.sum()));
    return copy;
  }

  /** The last segment of a request's path: the collection a POST creates in. */
  private static String collection(HttpRequest request) {
    String path = request.uri().getPath();
    return path.substring(path.lastIndexOf('/') + 1);
  }

  /** Requests of one method so far (e.g. {@code "POST"}). */
  public long get(String method) {
    LongAdder n = byMethod.get(method);
    return n == null ? 0 : n.sum();
  }

  /** All requests so far. */
  public long total() {
    return byMethod.values().stream().mapToLong(LongAdder::sum).sum();
  }

  /** Requests that change something: POST, PUT, PATCH and DELETE. */
  public long writes() {
    return get("POST") + get("PUT") + get("PATCH") + get("DELETE");
  }

  /** A sorted snapshot of the counters by method. */
  public Map<String, Long> snapshot() {
    Map<String, Long> copy = new TreeMap<>();
    byMethod.forEach((m, n) -> copy.put(m, n.sum()));
    return copy;
  }
}
