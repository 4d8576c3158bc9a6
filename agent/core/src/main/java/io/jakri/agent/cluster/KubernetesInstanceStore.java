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
import io.jakri.logging.LogText;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
 *       in-use reports, the claims of its node the store showed when it first saw the Instance) is
 *       written back into any Instance lacking them or naming another holder ({@code ClaimKeeper}),
 *       and travels with every write that lists the node in {@code nodes}. A node grants and frees
 *       only slots that are free or in its record (slot rule 4): a holder named by someone else is
 *       not a claim.
 *   <li>{@link #create} of an Instance this agent saw deleted restores the claims (and holders) the
 *       deleted state carried ({@code DeletedClaims}).
 *   <li>Only a holder frees its slot: this store records the slots its node frees in {@link
 *       #RELEASED_ANNOTATION}, and its view keeps a slot of another node held ({@code
 *       HolderOnlyRelease}) when that slot turns free without the holder's entry, unless the same
 *       object stopped listing the holder in {@code nodes}.
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
   * most 256 entries are kept (the oldest go first).
   */
  public static final String RELEASED_ANNOTATION = ReleasedSlots.ANNOTATION;

  private final KubernetesClient client;
  private final WatchedNamespaces namespaces;
  private final Function<String, Optional<String>> namespaceOf;
  private final String node;
  private final Function<String, Optional<OwnerReference>> owners;
  private final InstanceCache cache;
  private final ApiCalls calls;
  private volatile List<SharedIndexInformer<io.jakri.crd.Instance>> informers = List.of();

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
    this.cache = new InstanceCache(node, namespaceOf);
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
            cache.offer(obj);
          }

          @Override
          public void onUpdate(io.jakri.crd.Instance oldObj, io.jakri.crd.Instance newObj) {
            cache.offer(newObj);
          }

          @Override
          public void onDelete(io.jakri.crd.Instance obj, boolean finalStateUnknown) {
            if (cache.ours(obj)) {
              cache.forget(obj.getMetadata().getName(), InstanceResources.version(obj), true);
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
    CachedInstance c = cache.get(name);
    return c == null
        ? Optional.empty()
        : Optional.ofNullable(c.resource().getMetadata().getNamespace());
  }

  /** Where {@code instance} lives: where it was seen, else its Configuration's namespace. */
  private String namespaceFor(Instance instance) throws StoreException {
    CachedInstance c = cache.get(instance.name());
    if (c != null
        && c.resource().getMetadata().getNamespace() != null
        && cache.ours(c.resource())) {
      return c.resource().getMetadata().getNamespace();
    }
    return configurationNamespace(instance);
  }

  /** The namespace of {@code instance}'s Configuration. */
  private String configurationNamespace(Instance instance) throws StoreException {
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
    CachedInstance c = cache.get(name);
    return c == null ? Optional.empty() : Optional.of(c.value());
  }

  /** The uid of a cached Instance (for Events about it), if it is known. */
  public Optional<String> uidOf(String name) {
    CachedInstance c = cache.get(name);
    return c == null ? Optional.empty() : Optional.ofNullable(c.resource().getMetadata().getUid());
  }

  @Override
  public List<Instance> list() {
    return cache.list();
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
    instance = cache.restore(instance);
    String namespace = configurationNamespace(instance);
    io.jakri.crd.Instance resource = new io.jakri.crd.Instance();
    ObjectMetaBuilder meta =
        new ObjectMetaBuilder()
            .withName(instance.name())
            .withNamespace(namespace)
            .addToLabels(CONFIGURATION_LABEL, instance.configurationName());
    owners.apply(instance.configurationName()).ifPresent(meta::addToOwnerReferences);
    resource.setMetadata(meta.build());
    resource.setSpec(InstanceResources.spec(instance));
    try {
      calls.count(ApiCalls.Verb.CREATE);
      return cache.offer(resources(namespace).resource(resource).create());
    } catch (KubernetesClientException e) {
      throw failure("create", instance.name(), namespace, e);
    }
  }

  @Override
  public Instance update(Instance instance) throws StoreException {
    String namespace = namespaceFor(instance);
    CachedInstance current = cache.get(instance.name());
    Optional<Map<String, String>> annotations =
        current == null
            ? Optional.empty()
            : ReleasedSlots.releasedAnnotations(current, instance, node);
    if (current != null && current.value().version() == instance.version()) {
      Optional<List<Map<String, Object>>> ops = InstancePatch.patchOps(current, instance);
      if (ops.isPresent()) {
        annotations.ifPresent(
            a -> ops.get().add(InstancePatch.op("add", "/metadata/annotations", a)));
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
    resource.setSpec(InstanceResources.spec(instance));
    try {
      calls.count(ApiCalls.Verb.UPDATE);
      return cache.offer(resources(namespace).resource(resource).update());
    } catch (KubernetesClientException e) {
      throw failure("update", instance.name(), namespace, e);
    }
  }

  /**
   * Writes only the changed members of the spec (slot claims and releases, the node list) as a JSON
   * patch ({@code InstancePatch}) whose first operation pins the resourceVersion the change was
   * computed from. The request carries the patch only, not the whole Instance, and needs no prior
   * GET.
   */
  private Instance patch(Instance instance, String namespace, List<Map<String, Object>> ops)
      throws StoreException {
    io.jakri.crd.Instance target = new io.jakri.crd.Instance();
    target.setMetadata(
        new ObjectMetaBuilder().withName(instance.name()).withNamespace(namespace).build());
    String json = client.getKubernetesSerialization().asJson(ops);
    try {
      calls.count(ApiCalls.Verb.UPDATE);
      return cache.offer(
          resources(namespace).resource(target).patch(PatchContext.of(PatchType.JSON), json));
    } catch (KubernetesClientException e) {
      throw failure("update", instance.name(), namespace, e);
    }
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
      cache.forget(instance.name(), instance.version(), false);
    } catch (KubernetesClientException e) {
      throw failure("delete", instance.name(), namespace, e);
    }
  }

  @Override
  public void addListener(Listener listener) {
    cache.addListener(listener);
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
        CachedInstance c = cache.get(name);
        cache.forget(name, c == null ? Long.MAX_VALUE : c.value().version(), true);
      } else {
        cache.offer(fresh);
      }
    } catch (KubernetesClientException e) {
      LOG.debug("instance {}: fresh read failed: {}", name, describe(e));
    }
  }

  // Longest failure text in a message: a log line carries more than it.
  private static final int MAX_FAILURE = 300;

  /**
   * The HTTP code and the server's own message, e.g. {@code HTTP 422: Instance.akri.sh "x" is
   * invalid: ...}; never fabric8's message, which repeats the URL and dumps the whole {@code
   * Status} object (hundreds of characters, in a line logged on every retry). Bounded.
   */
  static String describe(KubernetesClientException e) {
    String said;
    if (e.getCode() > 0) {
      String server = e.getStatus() == null ? null : e.getStatus().getMessage();
      said =
          "HTTP " + e.getCode() + (server == null || server.isBlank() ? "" : ": " + server.strip());
    } else {
      said = String.valueOf(e.getMessage());
    }
    return LogText.bounded(said, MAX_FAILURE);
  }
}
