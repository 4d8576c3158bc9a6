package io.jakri.agent.external;

import io.grpc.ManagedChannel;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The registered endpoints, by handler name in registration order: each name's handler and
 * subscribers, each endpoint's channel (created on first use). At most {@code maxEndpoints}
 * endpoints; a name without endpoints leaves. Not thread-safe: its owner guards it.
 */
final class EndpointTable {

  /**
   * An accepted registration: whether its name is new, whether it is the same endpoint again, the
   * endpoint it replaced under its key (and that one's channel, to shut down) and the name's
   * subscribers to tell.
   */
  record Registration(
      boolean newName,
      boolean again,
      ExternalEndpoint replaced,
      ManagedChannel oldChannel,
      List<ExternalHandlers.EndpointListener> subscribers) {}

  /**
   * A dropped endpoint: whether its name left with it, its channel (to shut down) and the name's
   * subscribers to tell.
   */
  record Removal(
      boolean nameGone,
      ManagedChannel channel,
      List<ExternalHandlers.EndpointListener> subscribers) {}

  private static final class NameGroup {
    final ExternalHandler handler;
    final Map<String, Registered> endpoints = new LinkedHashMap<>();
    final List<ExternalHandlers.EndpointListener> subscribers = new CopyOnWriteArrayList<>();

    NameGroup(ExternalHandler handler) {
      this.handler = handler;
    }
  }

  private static final class Registered {
    final ExternalEndpoint endpoint;
    ManagedChannel channel;

    Registered(ExternalEndpoint endpoint) {
      this.endpoint = endpoint;
    }
  }

  private final int maxEndpoints;
  private final Function<String, ExternalHandler> handlerOf;
  private final Map<String, NameGroup> groups = new LinkedHashMap<>();

  EndpointTable(int maxEndpoints, Function<String, ExternalHandler> handlerOf) {
    this.maxEndpoints = maxEndpoints;
    this.handlerOf = handlerOf;
  }

  /**
   * Registers an endpoint, or registers it again (same key and content); empty when refused for the
   * endpoint limit.
   */
  Optional<Registration> register(ExternalEndpoint endpoint) {
    NameGroup g = groups.get(endpoint.name());
    boolean newName = g == null;
    Registered existing = g == null ? null : g.endpoints.get(endpoint.key());
    if (existing == null && size() >= maxEndpoints) {
      return Optional.empty();
    }
    if (g == null) {
      g = new NameGroup(handlerOf.apply(endpoint.name()));
      groups.put(endpoint.name(), g);
    }
    boolean again = false;
    ExternalEndpoint replaced = null;
    ManagedChannel oldChannel = null;
    if (existing != null && existing.endpoint.equals(endpoint)) {
      again = true;
    } else {
      if (existing != null) {
        replaced = existing.endpoint;
        oldChannel = existing.channel;
      }
      g.endpoints.put(endpoint.key(), new Registered(endpoint));
    }
    return Optional.of(
        new Registration(newName, again, replaced, oldChannel, List.copyOf(g.subscribers)));
  }

  /** Removes an endpoint; empty when it is not registered (or another took its key). */
  Optional<Removal> drop(ExternalEndpoint endpoint) {
    NameGroup g = groups.get(endpoint.name());
    Registered r = g == null ? null : g.endpoints.get(endpoint.key());
    if (r == null || !r.endpoint.equals(endpoint)) {
      return Optional.empty();
    }
    g.endpoints.remove(endpoint.key());
    boolean nameGone = g.endpoints.isEmpty();
    if (nameGone) {
      groups.remove(endpoint.name());
    }
    return Optional.of(new Removal(nameGone, r.channel, List.copyOf(g.subscribers)));
  }

  /** Endpoints of {@code name} now, subscribing {@code listener} to later changes. */
  List<ExternalEndpoint> subscribe(String name, ExternalHandlers.EndpointListener listener) {
    NameGroup g = groups.get(name);
    if (g == null) {
      return List.of();
    }
    g.subscribers.add(listener);
    return g.endpoints.values().stream().map(r -> r.endpoint).toList();
  }

  void unsubscribe(String name, ExternalHandlers.EndpointListener listener) {
    NameGroup g = groups.get(name);
    if (g != null) {
      g.subscribers.remove(listener);
    }
  }

  /**
   * The channel of a registered endpoint, made by {@code open} on first use; empty when it is not
   * registered.
   */
  Optional<ManagedChannel> channel(ExternalEndpoint endpoint, Supplier<ManagedChannel> open) {
    NameGroup g = groups.get(endpoint.name());
    Registered r = g == null ? null : g.endpoints.get(endpoint.key());
    if (r == null || !r.endpoint.equals(endpoint)) {
      return Optional.empty();
    }
    if (r.channel == null) {
      r.channel = open.get();
    }
    return Optional.of(r.channel);
  }

  /** Every channel made so far. */
  List<ManagedChannel> channels() {
    List<ManagedChannel> channels = new ArrayList<>();
    groups
        .values()
        .forEach(
            g ->
                g.endpoints.values().stream()
                    .filter(r -> r.channel != null)
                    .forEach(r -> channels.add(r.channel)));
    return channels;
  }

  /** Number of endpoints, all names together. */
  int size() {
    return groups.values().stream().mapToInt(g -> g.endpoints.size()).sum();
  }

  /** Every endpoint, by name and then in registration order. */
  List<ExternalEndpoint> all() {
    List<ExternalEndpoint> list = new ArrayList<>();
    groups.values().forEach(g -> g.endpoints.values().forEach(r -> list.add(r.endpoint)));
    return list;
  }

  /** The handler of a name that has endpoints. */
  Optional<ExternalHandler> handler(String name) {
    NameGroup g = groups.get(name);
    return g == null ? Optional.empty() : Optional.of(g.handler);
  }

  /** The names that have endpoints, sorted. */
  Set<String> names() {
    return new TreeSet<>(groups.keySet());
  }
}
