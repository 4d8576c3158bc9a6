package io.jakri.controller;

import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
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

  /** The interceptor to add to the controller's HTTP client builder. */
  public Interceptor interceptor() {
    return new Interceptor() {
      @Override
      public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
        byMethod.computeIfAbsent(request.method(), m -> new LongAdder()).increment();
      }
    };
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
