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
import io.jakri.agent.instance.StoreException;
import io.jakri.crd.InstanceSpec;
import io.jakri.crd.SlotUsage;
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
 *
 * <p><b>Claims survive whatever happens to the object.</b> The slot rules (docs/operations.md, "An
 * Instance was deleted, replaced or edited by hand") make a slot in use on one node never grantable
 * on another, even when a third party deletes the Instance, replaces it with an empty {@code
 * deviceUsage} or frees a used slot by hand:
 *
 * <ol>
 *   <li>Each node's own record of its claims ({@code LocalClaims}: Allocate grants, PodResources
 *       in-use reports, what the store showed) is written back into any Instance lacking them
 *       ({@code ClaimKeeper}), and travels with every write that lists the node in {@code nodes}.
 *   <li>{@link #create} of an Instance this agent saw deleted restores the claims (and holders) the
 *       deleted state carried ({@code tombstones}).
 *   <li>Only a holder frees its slot: this store records the slots its node frees in {@link
 *       #RELEASED_ANNOTATION}, and its view keeps a slot of another node held ({@link #guard}) when
 *       that slot turns free without the holder's entry, unless the same object stopped listing the
 *       holder in {@code nodes}.
 * </ol>
 *
 * <p>Why no order of events lets a second node win a slot node A holds: a grant is a write of the
 * Instance, computed from this agent's view. While the Instance is missing, nothing is granted
 * (Allocate finds no Instance). When it appears again, whoever wrote it either carried A's claim (A
 * itself by rule 1, or any agent that saw the deleted state by rule 2), or it did not and every
 * agent that saw A's claim keeps it held in its view by rule 3 until A answers: A, seeing its claim
 * missing, writes it back (the other agents' views then show it held for real) or, if it no longer
 * uses the slot, frees it itself after its reclaim grace (the entry lets the others take it). Both
 * outcomes are writes by A, ordered by resourceVersion before any grant that could take the slot.
 * The same holds for a replacement or hand edit of the existing object. What is not covered: an
 * agent that never saw A's claim (it started after the deletion) and an Instance written again by
 * someone other than an agent that saw it; there only A's own write-back protects the slot.
 */
public final class KubernetesInstanceStore implements InstanceStore, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(KubernetesInstanceStore.class);

  /** Label on every Instance naming its Configuration (lets tools select by Configuration). */
  public static final String CONFIGURATION_LABEL = "akri.sh/configuration";

  /**
   * Annotation listing the slots their holders freed themselves: {@code <slot>=<node>@<rv>} entries
   * separated by commas, {@code rv} being the resourceVersion the freeing write was based on. An
   * entry is added when a node frees a slot it held and removed when the slot is claimed again; at
   * most {@link #MAX_RELEASES} entries are kept (the oldest go first).
   */
  public static final String RELEASED_ANNOTATION = "akri.sh/released";

  /** The most entries {@link #RELEASED_ANNOTATION} keeps. */
  static final int MAX_RELEASES = 256;

  /** The most deleted Instances remembered (for their claims) until they are written again. */
  static final int MAX_TOMBSTONES = 256;

  private final KubernetesClient client;
  private final WatchedNamespaces namespaces;
  private final Function<String, Optional<String>> namespaceOf;
  private final String node;
  private final Function<String, Optional<OwnerReference>> owners;
  private final Map<String, Cached> cache = new ConcurrentHashMap<>();
  // Last state of Instances seen deleted that held slots, by name, eldest first.
  private final Map<String, Cached> tombstones =
      java.util.Collections.synchronizedMap(
          new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Cached> eldest) {
              return size() > MAX_TOMBSTONES;
            }
          });
  private final List<Listener> listeners = new CopyOnWriteArrayList<>();
  private final ApiCalls calls;
  private volatile List<SharedIndexInformer<io.jakri.crd.Instance>> informers = List.of();

  /**
   * One cached Instance: the agent's view (the resource with the guarded slots shown held), the
   * resource it came from, and the guards.
   */
  record Cached(Instance value, io.jakri.crd.Instance resource, Map<String, Guard> guards) {
    Cached(Instance value, io.jakri.crd.Instance resource) {
      this(value, resource, Map.of());
    }
  }

  /**
   * A slot the resource shows free but this agent still treats as held by {@code holder}: it saw
   * the slot held by another node and then free, without that node's release entry. {@code since}
   * is the last version in which the slot was seen held.
   */
  record Guard(SlotUsage holder, long since) {}

  /** One entry of {@link #RELEASED_ANNOTATION}. */
  record Release(String node, long base) {}

  /**
   * @param node this agent's node: slots it frees are recorded in {@link #RELEASED_ANNOTATION}
   * @param owners the owner reference for an Instance of the named Configuration (its uid comes
   *     from the Configuration watch); empty when the Configuration is unknown
   * @param calls counts the API requests this store makes
   */
  public KubernetesInstanceStore(
      KubernetesClient client,
      String namespace,
      String node,
      Function<String, Optional<OwnerReference>> owners,
      ApiCalls calls) {
    this(client, WatchedNamespaces.of(namespace), c -> Optional.of(namespace), node, owners, calls);
  }

  /**
   * @param namespaces where Instances are watched
   * @param namespaceOf the namespace of the named Configuration (where its Instances go); empty
   *     when the Configuration is unknown
   * @param node this agent's node: slots it frees are recorded in {@link #RELEASED_ANNOTATION}
   * @param owners the owner reference for an Instance of the named Configuration
   * @param calls counts the API requests this store makes
   */
  public KubernetesInstanceStore(
      KubernetesClient client,
      WatchedNamespaces namespaces,
      Function<String, Optional<String>> namespaceOf,
      String node,
      Function<String, Optional<OwnerReference>> owners,
      ApiCalls calls) {
    this.client = client;
    this.namespaces = namespaces;
    this.namespaceOf = namespaceOf;
    this.node = node;
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
              io.jakri.logging.ApiFailure.describe(String.valueOf(client.getMasterUrl()), t));
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
              forget(obj.getMetadata().getName(), version(obj), true);
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

  /**
   * Creates the Instance. When this agent saw an Instance of that name deleted (and remembers it),
   * the claims it last saw there are restored into the slots {@code instance} leaves free, and
   * their holders into {@code nodes} (slot rule 2 in docs/operations.md): a deleted Instance comes
   * back with the claims of every node, not only of the node that happens to write it first. A
   * holder that no longer uses a slot frees it after its reclaim grace; a holder that is gone is
   * removed by the controller or its own leftover sweep as usual.
   */
  @Override
  public Instance create(Instance instance) throws StoreException {
    Cached tomb = tombstones.get(instance.name());
    if (tomb != null) {
      instance = restore(instance, tomb.value());
    }
    String configuration = instance.configurationName();
    String instanceName = instance.name();
    String namespace =
        namespaceOf
            .apply(configuration)
            .orElseThrow(
                () ->
                    new StoreException.Unavailable(
                        "instance "
                            + instanceName
                            + ": the namespace of Configuration "
                            + configuration
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

  /** {@code instance} with the claims of {@code last} (a deleted state) in its free slots. */
  private Instance restore(Instance instance, Instance last) {
    Map<String, SlotUsage> usage = new LinkedHashMap<>(instance.deviceUsage());
    TreeSet<String> nodes = new TreeSet<>(instance.nodes());
    List<String> restored = new ArrayList<>();
    last.deviceUsage()
        .forEach(
            (slot, held) -> {
              if (!(held instanceof SlotUsage.Free) && usage.get(slot) instanceof SlotUsage.Free) {
                usage.put(slot, held);
                nodes.add(holder(held));
                restored.add(slot + "=" + held.print());
              }
            });
    if (restored.isEmpty()) {
      return instance;
    }
    LOG.info(
        "instance {}: written again after it was deleted, with the claims it carried: {}",
        instance.name(),
        restored);
    return instance.withUsage(usage).withNodes(nodes);
  }

  @Override
  public Instance update(Instance instance) throws StoreException {
    String namespace = namespaceFor(instance);
    Cached current = cache.get(instance.name());
    Optional<Map<String, String>> annotations =
        current == null ? Optional.empty() : releasedAnnotations(current, instance, node);
    if (current != null && current.value().version() == instance.version()) {
      Optional<List<Map<String, Object>>> ops = patchOps(current, instance);
      if (ops.isPresent()) {
        annotations.ifPresent(a -> ops.get().add(op("add", "/metadata/annotations", a)));
        return patch(instance, namespace, ops.get());
      }
    }
    ObjectMeta meta =
        current == null
            ? new ObjectMetaBuilder().withName(instance.name()).withNamespace(namespace).build()
            : new ObjectMetaBuilder(current.resource().getMetadata()).build();
    annotations.ifPresent(meta::setAnnotations);
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

  /**
   * The resource's annotations with {@link #RELEASED_ANNOTATION} updated for the write of {@code
   * desired} over {@code current}: an entry for each slot {@code node} held and frees, none for a
   * slot that becomes held. Empty when the annotation stays as it is.
   */
  static Optional<Map<String, String>> releasedAnnotations(
      Cached current, Instance desired, String node) {
    Map<String, Release> released = releases(current.resource());
    boolean changed = false;
    for (Map.Entry<String, SlotUsage> slot : desired.deviceUsage().entrySet()) {
      SlotUsage want = slot.getValue();
      if (want instanceof SlotUsage.Free) {
        SlotUsage had = current.value().deviceUsage().get(slot.getKey());
        if (had != null && had.heldBy(node)) {
          released.remove(slot.getKey()); // re-inserted last: the newest
          released.put(slot.getKey(), new Release(node, desired.version()));
          changed = true;
        }
      } else if (released.remove(slot.getKey()) != null) {
        changed = true;
      }
    }
    if (released.keySet().retainAll(desired.deviceUsage().keySet())) {
      changed = true;
    }
    if (!changed) {
      return Optional.empty();
    }
    List<Map.Entry<String, Release>> entries = new ArrayList<>(released.entrySet());
    if (entries.size() > MAX_RELEASES) {
      entries.sort(Map.Entry.comparingByValue(java.util.Comparator.comparingLong(Release::base)));
      entries = entries.subList(entries.size() - MAX_RELEASES, entries.size());
    }
    Map<String, String> annotations = new LinkedHashMap<>();
    Map<String, String> existing = current.resource().getMetadata().getAnnotations();
    if (existing != null) {
      annotations.putAll(existing);
    }
    if (entries.isEmpty()) {
      annotations.remove(RELEASED_ANNOTATION);
    } else {
      StringBuilder text = new StringBuilder();
      for (Map.Entry<String, Release> e : entries) {
        if (!text.isEmpty()) {
          text.append(',');
        }
        text.append(e.getKey())
            .append('=')
            .append(e.getValue().node())
            .append('@')
            .append(e.getValue().base());
      }
      annotations.put(RELEASED_ANNOTATION, text.toString());
    }
    return Optional.of(annotations);
  }

  /** The entries of {@link #RELEASED_ANNOTATION}; malformed ones are left out. */
  static Map<String, Release> releases(io.jakri.crd.Instance resource) {
    Map<String, String> annotations = resource.getMetadata().getAnnotations();
    String text = annotations == null ? null : annotations.get(RELEASED_ANNOTATION);
    Map<String, Release> released = new LinkedHashMap<>();
    if (text == null || text.isEmpty()) {
      return released;
    }
    for (String entry : text.split(",")) {
      int eq = entry.indexOf('=');
      int at = entry.lastIndexOf('@');
      if (eq <= 0 || at <= eq + 1) {
        continue;
      }
      try {
        released.put(
            entry.substring(0, eq),
            new Release(entry.substring(eq + 1, at), Long.parseLong(entry.substring(at + 1))));
      } catch (NumberFormatException e) {
        // left out: an entry that cannot be read confirms nothing
      }
    }
    return released;
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
      forget(instance.name(), instance.version(), false);
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
        forget(name, c == null ? Long.MAX_VALUE : c.value().version(), true);
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
    String name = resource.getMetadata().getName();
    Cached known = cache.get(name);
    long version = version(resource);
    if (known != null && known.value().version() >= version) {
      return known.value();
    }
    Instance actual = toInstance(resource);
    boolean[] changed = {false};
    Cached[] made = {null};
    Cached stored =
        cache.compute(
            name,
            (k, old) -> {
              if (old != null && old.value().version() >= version) {
                return old;
              }
              Cached previous = old != null ? old : tombstones.remove(name);
              made[0] = guard(previous, resource, actual, node);
              changed[0] = old == null || !old.value().sameContent(made[0].value());
              return made[0];
            });
    if (made[0] != null) {
      logGuards(known, made[0]);
    }
    if (changed[0]) {
      for (Listener l : listeners) {
        l.changed(made[0].value());
      }
    }
    return made[0] != null ? made[0].value() : stored.value();
  }

  /**
   * The cached view of {@code resource} given the {@code previous} view of that name (cached, or
   * the last one seen before it was deleted): a slot {@code previous} shows held by another node
   * and the resource shows free stays held in the view (guarded, slot rule 3 in docs/operations.md)
   * unless its holder freed it itself (a {@link #RELEASED_ANNOTATION} entry of that node based on a
   * version at least as new as the last one seen with the claim) or the same object stopped listing
   * the holder in {@code nodes} (the holder left, or the controller removed it). So this agent
   * never grants a slot another node holds because someone else deleted, replaced or edited the
   * Instance: the holder writes its claim back, or confirms the free by freeing it itself.
   */
  static Cached guard(
      Cached previous, io.jakri.crd.Instance resource, Instance actual, String node) {
    if (previous == null) {
      return new Cached(actual, resource);
    }
    boolean sameObject =
        java.util.Objects.equals(
            previous.resource().getMetadata().getUid(), resource.getMetadata().getUid());
    List<String> previousNodes =
        previous.resource().getSpec() == null || previous.resource().getSpec().getNodes() == null
            ? List.of()
            : previous.resource().getSpec().getNodes();
    Map<String, Release> released = null;
    Map<String, Guard> guards = null;
    for (Map.Entry<String, SlotUsage> slot : previous.value().deviceUsage().entrySet()) {
      SlotUsage before = slot.getValue();
      if (before instanceof SlotUsage.Free || before.heldBy(node)) {
        continue;
      }
      if (!(actual.deviceUsage().get(slot.getKey()) instanceof SlotUsage.Free)) {
        continue; // held (by anyone), or no longer a slot
      }
      String holder = holder(before);
      Guard kept = previous.guards().get(slot.getKey());
      long since = kept != null ? kept.since() : previous.value().version();
      if (released == null) {
        released = releases(resource);
      }
      Release r = released.get(slot.getKey());
      boolean freedByHolder = r != null && r.node().equals(holder) && r.base() >= since;
      boolean holderRemoved =
          sameObject && previousNodes.contains(holder) && !actual.nodes().contains(holder);
      if (!freedByHolder && !holderRemoved) {
        if (guards == null) {
          guards = new LinkedHashMap<>();
        }
        guards.put(slot.getKey(), new Guard(before, since));
      }
    }
    if (guards == null) {
      return new Cached(actual, resource);
    }
    Map<String, SlotUsage> usage = new LinkedHashMap<>(actual.deviceUsage());
    guards.forEach((slot, g) -> usage.put(slot, g.holder()));
    return new Cached(actual.withUsage(usage), resource, Map.copyOf(guards));
  }

  private void logGuards(Cached before, Cached after) {
    Map<String, Guard> old = before == null ? Map.of() : before.guards();
    after
        .guards()
        .forEach(
            (slot, g) -> {
              if (!g.equals(old.get(slot))) {
                LOG.warn(
                    "instance {}: slot {} held by {} was freed by someone else; node {} does not"
                        + " grant it until {} frees it itself or claims it again",
                    after.value().name(),
                    slot,
                    g.holder().print(),
                    node,
                    holder(g.holder()));
              }
            });
    old.keySet().stream()
        .filter(slot -> !after.guards().containsKey(slot))
        .forEach(
            slot ->
                LOG.info(
                    "instance {}: slot {} settled: {}",
                    after.value().name(),
                    slot,
                    after.value().deviceUsage().get(slot) instanceof SlotUsage.Free
                        ? "freed by its holder"
                        : "held by " + after.value().deviceUsage().get(slot).print()));
  }

  /** The node a non-free slot usage names. */
  static String holder(SlotUsage usage) {
    if (usage instanceof SlotUsage.NodeUse n) {
      return n.node();
    }
    if (usage instanceof SlotUsage.ClassUse c) {
      return c.node();
    }
    if (usage instanceof SlotUsage.ClaimUse c) {
      return c.node();
    }
    throw new IllegalArgumentException("a free slot has no holder");
  }

  /**
   * Drops a cached Instance unless a newer version than {@code deletedVersion} is cached; when it
   * was deleted by someone (not by this agent's own delete) and held slots, remembers its last
   * state for {@link #create} and {@link #guard}.
   */
  private void forget(String name, long deletedVersion, boolean remember) {
    Cached[] removed = {null};
    cache.computeIfPresent(
        name,
        (k, old) -> {
          if (old.value().version() <= deletedVersion) {
            removed[0] = old;
            return null;
          }
          return old;
        });
    if (removed[0] != null) {
      if (remember
          && removed[0].value().deviceUsage().values().stream()
              .anyMatch(u -> !(u instanceof SlotUsage.Free))) {
        tombstones.put(name, removed[0]);
      }
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
