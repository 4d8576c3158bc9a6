package io.jakri.agent.cluster;

import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.SlotUsage;
import io.jakri.agent.instance.StoreException;
import io.jakri.crd.InstanceSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Instances as {@code instances.akri.sh} resources of the API server, each in its Configuration's
 * namespace, watched in the agent's namespaces (every namespace by default).
 *
 * <p>Instance names are per node (each is a kubelet resource), so the cache is keyed by name; an
 * Instance found in another namespace than its Configuration's (one of a shadowed Configuration of
 * the same name, see {@link ConfigurationWatcher}) is ignored.
 *
 * <p>Reads are served from a cache fed by an informer (one watch for all Instances) and by the
 * results of this agent's own writes, whichever is newer by resourceVersion, so a read right after
 * a write sees it. Writes go to the API server with the cached resourceVersion (a JSON patch of the
 * changed slots and nodes, or a PUT when more changed, which the server rejects with 409 when
 * someone else wrote first); on a conflict the Instance is read afresh (one GET) before {@link
 * StoreException.Conflict} is thrown, so the caller's retry starts from current state. Thread-safe;
 * listeners are called from the informer thread or the writing thread, and each call reflects a
 * state at least as new as the previous one for that Instance.
 */
public final class KubernetesInstanceStore implements InstanceStore, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(KubernetesInstanceStore.class);

  /** Label on every Instance naming its Configuration (lets tools select by Configuration). */
  public static final String CONFIGURATION_LABEL = "akri.sh/configuration";

  private final KubernetesClient client;
  private final WatchedNamespaces namespaces;
  private final Function<String, Optional<String>> namespaceOf;
  private final Function<String, Optional<OwnerReference>> owners;
  private final Map<String, Cached> cache = new ConcurrentHashMap<>();
  private final List<Listener> listeners = new CopyOnWriteArrayList<>();
  private final ApiCalls calls;
  private volatile List<SharedIndexInformer<io.jakri.crd.Instance>> informers = List.of();

  /** One cached Instance: the agent's view and the resource it came from. */
  record Cached(Instance value, io.jakri.crd.Instance resource) {}

  /**
   * @param owners the owner reference for an Instance of the named Configuration (its uid comes
   *     from the Configuration watch); empty when the Configuration is unknown
   * @param calls counts the API requests this store makes
   */
  public KubernetesInstanceStore(
      KubernetesClient client,
      String namespace,
      Function<String, Optional<OwnerReference>> owners,
      ApiCalls calls) {
    this(client, WatchedNamespaces.of(namespace), c -> Optional.of(namespace), owners, calls);
  }

  /**
   * @param namespaces where Instances are watched
   * @param namespaceOf the namespace of the named Configuration (where its Instances go); empty
   *     when the Configuration is unknown
   * @param owners the owner reference for an Instance of the named Configuration
   * @param calls counts the API requests this store makes
   */
  public KubernetesInstanceStore(
      KubernetesClient client,
      WatchedNamespaces namespaces,
      Function<String, Optional<String>> namespaceOf,
      Function<String, Optional<OwnerReference>> owners,
      ApiCalls calls) {
    this.client = client;
    this.namespaces = namespaces;
    this.namespaceOf = namespaceOf;
    this.owners = owners;
    this.calls = calls;
  }

  /**
   * Starts the watch. Returns at once; until the first list succeeds the cache is empty and writes
   * still work (a create of an existing Instance turns into a conflict and a fresh read). List and
   * watch failures are retried by the informer with backoff for as long as the store runs.
   */
  public void start() {
    List<SharedIndexInformer<io.jakri.crd.Instance>> started =
        namespaces.informers(client.resources(io.jakri.crd.Instance.class));
    started.forEach(this::watch);
    informers = started;
    started.forEach(SharedIndexInformer::start);
  }

  private void watch(SharedIndexInformer<io.jakri.crd.Instance> inf) {
    inf.exceptionHandler(
        (started, t) -> {
          LOG.warn(
              "instances watch in {} failed, retrying: {}",
              namespaces.describe(),
              WatchFailure.describe(String.valueOf(client.getMasterUrl()), t));
          return true;
        });
    inf.addEventHandler(
        new ResourceEventHandler<io.jakri.crd.Instance>() {
          @Override
          public void onAdd(io.jakri.crd.Instance obj) {
            offer(obj);
          }

          @Override
          public void onUpdate(io.jakri.crd.Instance oldObj, io.jakri.crd.Instance newObj) {
            offer(newObj);
          }

          @Override
          public void onDelete(io.jakri.crd.Instance obj, boolean finalStateUnknown) {
            if (ours(obj)) {
              forget(obj.getMetadata().getName(), version(obj));
            }
          }
        });
  }

  /** Whether the first list of Instances has been received. */
  public boolean synced() {
    List<SharedIndexInformer<io.jakri.crd.Instance>> infs = informers;
    return !infs.isEmpty() && infs.stream().allMatch(SharedIndexInformer::hasSynced);
  }

  /** Whether the watch is currently connected. */
  public boolean watching() {
    List<SharedIndexInformer<io.jakri.crd.Instance>> infs = informers;
    return !infs.isEmpty() && infs.stream().allMatch(SharedIndexInformer::isWatching);
  }

  /** The namespace of a cached Instance, if it is known. */
  public Optional<String> namespaceOfInstance(String name) {
    Cached c = cache.get(name);
    return c == null
        ? Optional.empty()
        : Optional.ofNullable(c.resource().getMetadata().getNamespace());
  }

  /**
   * Whether {@code resource} is in its Configuration's namespace (or that Configuration is not
   * known here, so nothing says otherwise).
   */
  private boolean ours(io.jakri.crd.Instance resource) {
    String configuration =
        resource.getSpec() == null ? null : resource.getSpec().getConfigurationName();
    if (configuration == null) {
      return true;
    }
    return namespaceOf
        .apply(configuration)
        .map(ns -> ns.equals(resource.getMetadata().getNamespace()))
        .orElse(true);
  }

  /** Where {@code instance} lives: where it was seen, else its Configuration's namespace. */
  private String namespaceFor(Instance instance) throws StoreException {
    Cached c = cache.get(instance.name());
    if (c != null && c.resource().getMetadata().getNamespace() != null && ours(c.resource())) {
      return c.resource().getMetadata().getNamespace();
    }
    return namespaceOf
        .apply(instance.configurationName())
        .orElseThrow(
            () ->
                new StoreException.Unavailable(
                    "instance "
                        + instance.name()
                        + ": the namespace of Configuration "
                        + instance.configurationName()
                        + " is not known (yet)",
                    null));
  }

  @Override
  public Optional<Instance> get(String name) {
    Cached c = cache.get(name);
    return c == null ? Optional.empty() : Optional.of(c.value());
  }

  /** The uid of a cached Instance (for Events about it), if it is known. */
  public Optional<String> uidOf(String name) {
    Cached c = cache.get(name);
    return c == null ? Optional.empty() : Optional.ofNullable(c.resource().getMetadata().getUid());
  }

  @Override
  public List<Instance> list() {
    List<Instance> all = new ArrayList<>(cache.size());
    cache.values().forEach(c -> all.add(c.value()));
    return all;
  }

  @Override
  public Instance create(Instance instance) throws StoreException {
    String namespace =
        namespaceOf
            .apply(instance.configurationName())
            .orElseThrow(
                () ->
                    new StoreException.Unavailable(
                        "instance "
                            + instance.name()
                            + ": the namespace of Configuration "
                            + instance.configurationName()
                            + " is not known (yet)",
                        null));
    io.jakri.crd.Instance resource = new io.jakri.crd.Instance();
    ObjectMetaBuilder meta =
        new ObjectMetaBuilder()
            .withName(instance.name())
            .withNamespace(namespace)
            .addToLabels(CONFIGURATION_LABEL, instance.configurationName());
    owners.apply(instance.configurationName()).ifPresent(meta::addToOwnerReferences);
    resource.setMetadata(meta.build());
    resource.setSpec(spec(instance));
    try {
      calls.count(ApiCalls.Verb.CREATE);
      return offer(resources(namespace).resource(resource).create());
    } catch (KubernetesClientException e) {
      throw failure("create", instance.name(), namespace, e);
    }
  }

  @Override
  public Instance update(Instance instance) throws StoreException {
    String namespace = namespaceFor(instance);
    Cached current = cache.get(instance.name());
    if (current != null && current.value().version() == instance.version()) {
      Optional<List<Map<String, Object>>> ops = patchOps(current, instance);
      if (ops.isPresent()) {
        return patch(instance, namespace, ops.get());
      }
    }
    ObjectMeta meta =
        current == null
            ? new ObjectMetaBuilder().withName(instance.name()).withNamespace(namespace).build()
            : new ObjectMetaBuilder(current.resource().getMetadata()).build();
    meta.setResourceVersion(Long.toString(instance.version()));
    io.jakri.crd.Instance resource = new io.jakri.crd.Instance();
    resource.setMetadata(meta);
    resource.setSpec(spec(instance));
    try {
      calls.count(ApiCalls.Verb.UPDATE);
      return offer(resources(namespace).resource(resource).update());
    } catch (KubernetesClientException e) {
      throw failure("update", instance.name(), namespace, e);
    }
  }

  /**
   * Writes only the changed members of the spec (slot claims and releases, the node list) as a JSON
   * patch whose first operation sets {@code metadata.resourceVersion} to the version the change was
   * computed from: the API server (and the fabric8 mock server) reject a patch whose resulting
   * resourceVersion differs from the stored one with 409, exactly as they reject a stale PUT. The
   * request carries the patch only, not the whole Instance, and needs no prior GET.
   */
  private Instance patch(Instance instance, String namespace, List<Map<String, Object>> ops)
      throws StoreException {
    io.jakri.crd.Instance target = new io.jakri.crd.Instance();
    target.setMetadata(
        new ObjectMetaBuilder().withName(instance.name()).withNamespace(namespace).build());
    String json = client.getKubernetesSerialization().asJson(ops);
    try {
      calls.count(ApiCalls.Verb.UPDATE);
      return offer(
          resources(namespace).resource(target).patch(PatchContext.of(PatchType.JSON), json));
    } catch (KubernetesClientException e) {
      throw failure("update", instance.name(), namespace, e);
    }
  }

  /**
   * The JSON patch turning the cached resource into {@code desired}, when the change is confined to
   * slot usages and nodes (the claims, releases and joins agents make all the time); empty when a
   * whole-object replacement is needed.
   */
  static Optional<List<Map<String, Object>>> patchOps(Cached current, Instance desired) {
    Instance base = current.value();
    InstanceSpec spec = current.resource().getSpec();
    if (spec == null
        || spec.getDeviceUsage() == null
        || spec.getNodes() == null
        || base.capacity() != desired.capacity()
        || base.shared() != desired.shared()
        || !base.configurationName().equals(desired.configurationName())
        || !base.brokerProperties().equals(desired.brokerProperties())
        || !spec.getDeviceUsage().keySet().equals(desired.deviceUsage().keySet())) {
      return Optional.empty();
    }
    List<Map<String, Object>> ops = new ArrayList<>();
    ops.add(op("replace", "/metadata/resourceVersion", Long.toString(base.version())));
    if (!base.nodes().equals(desired.nodes())) {
      ops.add(op("add", "/spec/nodes", new ArrayList<>(desired.nodes())));
    }
    desired
        .deviceUsage()
        .forEach(
            (slot, usage) -> {
              if (!usage.equals(base.deviceUsage().get(slot))) {
                ops.add(op("add", "/spec/deviceUsage/" + JsonPointer.escape(slot), usage.print()));
              }
            });
    return Optional.of(ops);
  }

  private static Map<String, Object> op(String op, String path, Object value) {
    Map<String, Object> m = new LinkedHashMap<>(4);
    m.put("op", op);
    m.put("path", path);
    m.put("value", value);
    return m;
  }

  @Override
  public void delete(Instance instance) throws StoreException {
    String namespace = namespaceFor(instance);
    try {
      calls.count(ApiCalls.Verb.DELETE);
      resources(namespace)
          .withName(instance.name())
          .lockResourceVersion(Long.toString(instance.version()))
          .delete();
      forget(instance.name(), instance.version());
    } catch (KubernetesClientException e) {
      throw failure("delete", instance.name(), namespace, e);
    }
  }

  @Override
  public void addListener(Listener listener) {
    listeners.add(listener);
  }

  @Override
  public void close() {
    informers.forEach(SharedIndexInformer::close);
  }

  private NonNamespaceOperation<
          io.jakri.crd.Instance,
          KubernetesResourceList<io.jakri.crd.Instance>,
          Resource<io.jakri.crd.Instance>>
      resources(String namespace) {
    return client.resources(io.jakri.crd.Instance.class).inNamespace(namespace);
  }

  /**
   * Maps an API error to a store error; on 409 and 404 the cache is refreshed first so the caller's
   * retry reads current state.
   */
  private StoreException failure(
      String verb, String name, String namespace, KubernetesClientException e) {
    int code = e.getCode();
    if (code == 409 || code == 404) {
      refresh(name, namespace);
      String what = code == 409 ? "changed meanwhile" : "not found";
      return code == 409
          ? new StoreException.Conflict("instance " + name + ": " + what + " (" + verb + ")")
          : new StoreException.NotFound("instance " + name + ": " + what + " (" + verb + ")");
    }
    return new StoreException.Unavailable(
        "instance " + name + ": " + verb + " failed: " + describe(e), e);
  }

  private void refresh(String name, String namespace) {
    try {
      calls.count(ApiCalls.Verb.GET);
      io.jakri.crd.Instance fresh = resources(namespace).withName(name).get();
      if (fresh == null) {
        Cached c = cache.get(name);
        forget(name, c == null ? Long.MAX_VALUE : c.value().version());
      } else {
        offer(fresh);
      }
    } catch (KubernetesClientException e) {
      LOG.debug("instance {}: fresh read failed: {}", name, describe(e));
    }
  }

  /** Caches {@code resource} unless a newer version is cached; tells listeners when it changed. */
  private Instance offer(io.jakri.crd.Instance resource) {
    if (!ours(resource)) {
      Cached mine = cache.get(resource.getMetadata().getName());
      return mine != null ? mine.value() : toInstance(resource);
    }
    // Most watch events are echoes of this agent's own writes, already cached from the write's
    // response: skip converting them.
    Cached known = cache.get(resource.getMetadata().getName());
    if (known != null && known.value().version() >= version(resource)) {
      return known.value();
    }
    Instance value = toInstance(resource);
    Cached next = new Cached(value, resource);
    boolean[] changed = {false};
    Cached stored =
        cache.compute(
            value.name(),
            (k, old) -> {
              if (old == null || old.value().version() < value.version()) {
                changed[0] = old == null || !old.value().sameContent(value);
                return next;
              }
              return old;
            });
    if (changed[0]) {
      for (Listener l : listeners) {
        l.changed(value);
      }
    }
    return stored.value().version() >= value.version() ? value : stored.value();
  }

  /** Drops a cached Instance unless a newer version than {@code deletedVersion} is cached. */
  private void forget(String name, long deletedVersion) {
    boolean[] removed = {false};
    cache.computeIfPresent(
        name,
        (k, old) -> {
          if (old.value().version() <= deletedVersion) {
            removed[0] = true;
            return null;
          }
          return old;
        });
    if (removed[0]) {
      for (Listener l : listeners) {
        l.deleted(name);
      }
    }
  }

  static InstanceSpec spec(Instance instance) {
    InstanceSpec spec = new InstanceSpec();
    spec.setConfigurationName(instance.configurationName());
    spec.setCdiName(
        io.jakri.crd.Configuration.GROUP
            + "/"
            + instance.configurationName()
            + "="
            + instance.hash());
    spec.setCapacity(instance.capacity());
    spec.setShared(instance.shared());
    spec.setNodes(new ArrayList<>(instance.nodes()));
    spec.setBrokerProperties(new LinkedHashMap<>(instance.brokerProperties()));
    Map<String, String> usage = new LinkedHashMap<>();
    instance.deviceUsage().forEach((slot, u) -> usage.put(slot, u.print()));
    spec.setDeviceUsage(usage);
    return spec;
  }

  static Instance toInstance(io.jakri.crd.Instance resource) {
    String name = resource.getMetadata().getName();
    InstanceSpec spec = resource.getSpec() == null ? new InstanceSpec() : resource.getSpec();
    Map<String, SlotUsage> usage = new LinkedHashMap<>();
    if (spec.getDeviceUsage() != null) {
      spec.getDeviceUsage()
          .forEach(
              (slot, text) -> {
                try {
                  usage.put(slot, SlotUsage.parse(text));
                } catch (IllegalArgumentException e) {
                  LOG.warn("instance {}: ignoring malformed deviceUsage {}: {}", name, slot, text);
                }
              });
    }
    int capacity = spec.getCapacity() == null ? 1 : Math.max(1, spec.getCapacity());
    return new Instance(
        name,
        spec.getConfigurationName() == null ? "" : spec.getConfigurationName(),
        capacity,
        Boolean.TRUE.equals(spec.getShared()),
        spec.getNodes() == null ? new TreeSet<>() : new TreeSet<>(spec.getNodes()),
        usage,
        spec.getBrokerProperties() == null ? Map.of() : spec.getBrokerProperties(),
        version(resource));
  }

  static long version(io.fabric8.kubernetes.api.model.HasMetadata resource) {
    String rv = resource.getMetadata().getResourceVersion();
    try {
      return rv == null ? 0 : Long.parseLong(rv);
    } catch (NumberFormatException e) {
      // resourceVersions are opaque; every server we know uses etcd's numeric revisions.
      throw new IllegalStateException("non-numeric resourceVersion " + rv, e);
    }
  }

  static String describe(KubernetesClientException e) {
    return e.getCode() > 0 ? "HTTP " + e.getCode() + " " + e.getMessage() : e.getMessage();
  }
}
