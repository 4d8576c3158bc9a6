package io.jakri.agent.cluster;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.jakri.agent.configuration.ConfigurationParser;
import io.jakri.agent.configuration.ConfigurationSpec;
import io.jakri.crd.Configuration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches {@code configurations.akri.sh} in one namespace and hands the valid ones to discovery.
 *
 * <p>Configurations are watched untyped and checked by the same {@link ConfigurationParser} rules
 * as standalone files, so one malformed object (the mock server and older API servers enforce no
 * schema) is reported as {@link Rejection} and never stops the watch or the other Configurations.
 * Changes are coalesced: after any event the complete desired set is recomputed once on the
 * scheduler. Thread-safe.
 */
public final class ConfigurationWatcher implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ConfigurationWatcher.class);

  private final KubernetesClient client;
  private final String namespace;
  private final ScheduledExecutorService scheduler;
  private final Consumer<List<ConfigurationSpec>> desired;
  private final ConfigurationParser parser = new ConfigurationParser();
  private final Map<String, Known> known = new ConcurrentHashMap<>();
  private final AtomicBoolean pending = new AtomicBoolean();
  private volatile SharedIndexInformer<GenericKubernetesResource> informer;
  private volatile boolean closed;

  /** One Configuration as last seen: its identity and either a spec or the reason it has none. */
  public record Known(
      String name,
      String uid,
      long generation,
      Optional<ConfigurationSpec> spec,
      List<String> problems,
      GenericKubernetesResource resource) {}

  /**
   * @param desired receives the complete list of valid Configurations after every change, on the
   *     scheduler thread
   */
  public ConfigurationWatcher(
      KubernetesClient client,
      String namespace,
      ScheduledExecutorService scheduler,
      Consumer<List<ConfigurationSpec>> desired) {
    this.client = client;
    this.namespace = namespace;
    this.scheduler = scheduler;
    this.desired = desired;
  }

  /** Starts the watch; returns at once. List/watch failures are retried with backoff. */
  public void start() {
    SharedIndexInformer<GenericKubernetesResource> inf =
        client
            .genericKubernetesResources(Configuration.resourceDefinition())
            .inNamespace(namespace)
            .runnableInformer(0);
    inf.exceptionHandler(
        (started, t) -> {
          LOG.warn(
              "configurations watch in namespace {} failed, retrying: {}",
              namespace,
              WatchFailure.describe(String.valueOf(client.getMasterUrl()), t));
          return true;
        });
    inf.addEventHandler(
        new ResourceEventHandler<GenericKubernetesResource>() {
          @Override
          public void onAdd(GenericKubernetesResource obj) {
            changed();
          }

          @Override
          public void onUpdate(GenericKubernetesResource oldObj, GenericKubernetesResource newObj) {
            changed();
          }

          @Override
          public void onDelete(GenericKubernetesResource obj, boolean finalStateUnknown) {
            changed();
          }
        });
    informer = inf;
    inf.start();
  }

  /** Whether the first list of Configurations has been received. */
  public boolean synced() {
    SharedIndexInformer<?> inf = informer;
    return inf != null && inf.hasSynced();
  }

  /** Every Configuration as last seen, valid or not, by name. */
  public Map<String, Known> known() {
    return Map.copyOf(known);
  }

  /** The owner reference an Instance of Configuration {@code name} carries. */
  public Optional<OwnerReference> ownerOf(String name) {
    Known k = known.get(name);
    if (k == null || k.uid() == null) {
      return Optional.empty();
    }
    return Optional.of(
        new OwnerReferenceBuilder()
            .withApiVersion(Configuration.GROUP + "/" + Configuration.VERSION)
            .withKind("Configuration")
            .withName(name)
            .withUid(k.uid())
            .withController(true)
            .withBlockOwnerDeletion(true)
            .build());
  }

  @Override
  public void close() {
    closed = true;
    SharedIndexInformer<?> inf = informer;
    if (inf != null) {
      inf.close();
    }
  }

  private void changed() {
    if (pending.compareAndSet(false, true)) {
      scheduler.schedule(this::recompute, 10, TimeUnit.MILLISECONDS);
    }
  }

  private void recompute() {
    pending.set(false);
    SharedIndexInformer<GenericKubernetesResource> inf = informer;
    if (inf == null || closed) {
      return;
    }
    Map<String, Known> next = new LinkedHashMap<>();
    List<ConfigurationSpec> valid = new ArrayList<>();
    for (GenericKubernetesResource resource : inf.getStore().list()) {
      Known k = check(resource);
      next.put(k.name(), k);
      k.spec().ifPresent(valid::add);
      Known before = known.get(k.name());
      if (!k.problems().isEmpty() && (before == null || !before.problems().equals(k.problems()))) {
        LOG.error("configuration {}/{}: rejected: {}", namespace, k.name(), k.problems());
      }
    }
    known.keySet().retainAll(next.keySet());
    known.putAll(next);
    try {
      desired.accept(valid);
    } catch (RuntimeException e) {
      LOG.error("applying configurations failed: {}", e.toString(), e);
    }
  }

  private Known check(GenericKubernetesResource resource) {
    String name = resource.getMetadata().getName();
    long generation =
        resource.getMetadata().getGeneration() == null ? 0 : resource.getMetadata().getGeneration();
    Object document;
    try {
      document = client.getKubernetesSerialization().convertValue(resource, Map.class);
    } catch (RuntimeException e) {
      return new Known(
          name,
          resource.getMetadata().getUid(),
          generation,
          Optional.empty(),
          List.of("unreadable: " + e.getMessage()),
          resource);
    }
    ConfigurationParser.Result result =
        parser.check("configuration " + namespace + "/" + name, document);
    return new Known(
        name,
        resource.getMetadata().getUid(),
        generation,
        result.configurations().stream().findFirst(),
        result.errors(),
        resource);
  }
}
