package io.jakri.agent.cluster;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.jakri.agent.configuration.ConfigurationParser;
import io.jakri.agent.configuration.ConfigurationSource;
import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.crd.Configuration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
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
 * Watches {@code configurations.akri.sh} in the watched namespaces (every namespace by default) and
 * hands the valid ones to discovery.
 *
 * <p>Names are per node: a Configuration's name is its kubelet resource ({@code
 * akri.sh/<configuration>}) and the prefix of its Instances' names, which are kubelet resources
 * too. So when Configurations of the same name exist in several namespaces, only the oldest (by
 * creationTimestamp, then namespace in alphabetical order, the same choice on every node) is
 * served; each other one is reported as {@link #shadowed() shadowed} with one error line and is
 * served as soon as the older one is deleted.
 *
 * <p>Configurations are watched untyped and checked by the same {@link ConfigurationParser} rules
 * as standalone files, so one malformed object (the mock server and older API servers enforce no
 * schema) is reported as {@link Rejection} and never stops the watch or the other Configurations.
 * Changes are coalesced: after any event the complete desired set is recomputed once on the
 * scheduler. Thread-safe.
 */
public final class ConfigurationWatcher implements ConfigurationSource {

  private static final Logger LOG = LoggerFactory.getLogger(ConfigurationWatcher.class);

  private final KubernetesClient client;
  private final WatchedNamespaces namespaces;
  private final ScheduledExecutorService scheduler;
  private final Consumer<List<ConfigurationSpec>> desired;
  private final ConfigurationParser parser = new ConfigurationParser();
  private final Map<String, Known> known = new ConcurrentHashMap<>();
  private final Map<String, String> shadowed = new ConcurrentHashMap<>();
  private final AtomicBoolean pending = new AtomicBoolean();
  private volatile List<SharedIndexInformer<GenericKubernetesResource>> informers = List.of();
  private volatile boolean closed;

  /**
   * One Configuration as last seen: its identity and either a spec or the reason it has none.
   *
   * @param warnings what the checks found but ignored, e.g. {@code unknown field spec.x ignored},
   *     as standalone mode logs it for a file
   */
  public record Known(
      String namespace,
      String name,
      String uid,
      long generation,
      Optional<ConfigurationSpec> spec,
      List<String> problems,
      List<String> warnings,
      GenericKubernetesResource resource) {

    public Known {
      problems = List.copyOf(problems);
      warnings = List.copyOf(warnings);
    }

    /**
     * The warnings to log now that this is what was seen after {@code before} (null: not seen
     * before): all of them once per generation of a Configuration, none on a resync or a status
     * change of the same generation.
     */
    List<String> warningsToLog(Known before) {
      boolean sameGeneration =
          before != null
              && java.util.Objects.equals(before.uid(), uid)
              && before.generation() == generation
              && before.warnings().equals(warnings);
      return sameGeneration ? List.of() : warnings;
    }
  }

  /**
   * @param desired receives the complete list of valid Configurations after every change, on the
   *     scheduler thread
   */
  public ConfigurationWatcher(
      KubernetesClient client,
      WatchedNamespaces namespaces,
      ScheduledExecutorService scheduler,
      Consumer<List<ConfigurationSpec>> desired) {
    this.client = client;
    this.namespaces = namespaces;
    this.scheduler = scheduler;
    this.desired = desired;
  }

  /** For an agent watching only {@code namespace}. */
  public ConfigurationWatcher(
      KubernetesClient client,
      String namespace,
      ScheduledExecutorService scheduler,
      Consumer<List<ConfigurationSpec>> desired) {
    this(client, WatchedNamespaces.of(namespace), scheduler, desired);
  }

  /** Starts the watch; returns at once. List/watch failures are retried with backoff. */
  @Override
  public void start() {
    List<SharedIndexInformer<GenericKubernetesResource>> started =
        namespaces.informers(client.genericKubernetesResources(Configuration.resourceDefinition()));
    for (SharedIndexInformer<GenericKubernetesResource> inf : started) {
      watch(inf);
    }
    informers = started;
    started.forEach(SharedIndexInformer::start);
  }

  private void watch(SharedIndexInformer<GenericKubernetesResource> inf) {
    inf.exceptionHandler(
        (started, t) -> {
          LOG.warn(
              "configurations watch in {} failed, retrying: {}",
              namespaces.describe(),
              io.jakri.logging.ApiFailure.describe(String.valueOf(client.getMasterUrl()), t));
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
  }

  /** Whether the first list of Configurations has been received. */
  public boolean synced() {
    List<SharedIndexInformer<GenericKubernetesResource>> infs = informers;
    return !infs.isEmpty() && infs.stream().allMatch(SharedIndexInformer::hasSynced);
  }

  /**
   * Every Configuration this agent serves, as last seen, valid or not, by name (a shadowed one is
   * not among them).
   */
  public Map<String, Known> known() {
    return Map.copyOf(known);
  }

  /** The namespace of the served Configuration {@code name}, if there is one. */
  public Optional<String> namespaceOf(String name) {
    Known k = known.get(name);
    return k == null ? Optional.empty() : Optional.of(k.namespace());
  }

  /**
   * Configurations not served because an older one of the same name exists in another namespace:
   * {@code namespace/name} to the reason.
   */
  public Map<String, String> shadowed() {
    return Map.copyOf(shadowed);
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
    informers.forEach(SharedIndexInformer::close);
  }

  private void changed() {
    if (pending.compareAndSet(false, true)) {
      scheduler.schedule(this::recompute, 10, TimeUnit.MILLISECONDS);
    }
  }

  private void recompute() {
    pending.set(false);
    List<SharedIndexInformer<GenericKubernetesResource>> infs = informers;
    if (infs.isEmpty() || closed) {
      return;
    }
    List<GenericKubernetesResource> all = new ArrayList<>();
    infs.forEach(inf -> all.addAll(inf.getStore().list()));
    all.sort(OLDEST_FIRST);
    Map<String, Known> next = new LinkedHashMap<>();
    Map<String, String> nextShadowed = new LinkedHashMap<>();
    List<ConfigurationSpec> valid = new ArrayList<>();
    for (GenericKubernetesResource resource : all) {
      String name = resource.getMetadata().getName();
      String namespace = resource.getMetadata().getNamespace();
      Known served = next.get(name);
      if (served != null) {
        String key = namespace + "/" + name;
        String reason =
            "not served: Configuration "
                + served.namespace()
                + "/"
                + name
                + " is older and has the same name (names are per node: akri.sh/"
                + name
                + " and its Instances' resources); rename one of them";
        nextShadowed.put(key, reason);
        if (!reason.equals(shadowed.get(key))) {
          LOG.error("configuration {}: {}", key, reason);
        }
        continue;
      }
      Known k = check(client.getKubernetesSerialization(), parser, resource);
      next.put(k.name(), k);
      k.spec().ifPresent(valid::add);
      Known before = known.get(k.name());
      for (String warning : k.warningsToLog(before)) {
        LOG.warn("{} (generation {})", warning, k.generation());
      }
      if (!k.problems().isEmpty() && (before == null || !before.problems().equals(k.problems()))) {
        LOG.error("configuration {}/{}: rejected: {}", k.namespace(), k.name(), k.problems());
      }
    }
    // A name now served from another namespace is another Configuration: discovery drops the old
    // one (its devices and Instances) before it starts the new one.
    List<String> moved = new ArrayList<>();
    next.forEach(
        (name, k) -> {
          Known before = known.get(name);
          if (before != null && !before.namespace().equals(k.namespace())) {
            moved.add(name);
          }
        });
    if (!moved.isEmpty()) {
      LOG.info("configurations {} now served from another namespace; restarting them", moved);
      try {
        desired.accept(valid.stream().filter(spec -> !moved.contains(spec.name())).toList());
      } catch (RuntimeException e) {
        LOG.error("applying configurations failed: {}", e.toString(), e);
      }
    }
    known.keySet().retainAll(next.keySet());
    known.putAll(next);
    shadowed.keySet().retainAll(nextShadowed.keySet());
    shadowed.putAll(nextShadowed);
    try {
      desired.accept(valid);
    } catch (RuntimeException e) {
      LOG.error("applying configurations failed: {}", e.toString(), e);
    }
  }

  /** Oldest first; equal timestamps by namespace, so every node makes the same choice. */
  private static final Comparator<GenericKubernetesResource> OLDEST_FIRST =
      Comparator.comparing(
              (GenericKubernetesResource r) -> timestamp(r.getMetadata().getCreationTimestamp()))
          .thenComparing(r -> String.valueOf(r.getMetadata().getNamespace()));

  private static Instant timestamp(String creationTimestamp) {
    if (creationTimestamp == null) {
      return Instant.MAX;
    }
    try {
      return OffsetDateTime.parse(creationTimestamp).toInstant();
    } catch (DateTimeParseException e) {
      return Instant.MAX;
    }
  }

  /**
   * Checks one Configuration as the watch received it: converted to maps and lists, then by the
   * same rules as a standalone file.
   */
  static Known check(
      KubernetesSerialization serialization,
      ConfigurationParser parser,
      GenericKubernetesResource resource) {
    String name = resource.getMetadata().getName();
    String namespace = resource.getMetadata().getNamespace();
    long generation =
        resource.getMetadata().getGeneration() == null ? 0 : resource.getMetadata().getGeneration();
    Object document;
    try {
      document = serialization.convertValue(resource, Map.class);
    } catch (RuntimeException e) {
      return new Known(
          namespace,
          name,
          resource.getMetadata().getUid(),
          generation,
          Optional.empty(),
          List.of("unreadable: " + e.getMessage()),
          List.of(),
          resource);
    }
    ConfigurationParser.Result result =
        parser.check("configuration " + namespace + "/" + name, document);
    return new Known(
        namespace,
        name,
        resource.getMetadata().getUid(),
        generation,
        result.configurations().stream().findFirst(),
        result.errors(),
        result.warnings(),
        resource);
  }
}
