package io.jakri.agent.cluster;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes extended-resource keys that the agent no longer serves from its Node's {@code
 * status.capacity} and {@code status.allocatable} (DESIGN.md §4, last bullet).
 *
 * <p>The kubelet drops a resource whose plugin went away only after five minutes, and then leaves a
 * {@code 0} entry on the Node for ever (KUBELET.md, "Disconnects, restarts, stale capacity"); the
 * scheduler and {@code kubectl describe node} keep showing it. This class sends the JSON patch the
 * Akri blog sends by hand with curl, through the Node's {@code status} subresource.
 *
 * <p>A real API server answers 422 to a JSON-patch {@code remove} of a key that is not there, so
 * each attempt reads the Node first and removes only the keys present in it. When a key disappears
 * between the read and the patch (someone else tidied, or the kubelet rewrote its status) the
 * server answers 422 or 409; the attempt is then repeated with a fresh read, at most {@value
 * #MAX_ATTEMPTS} times. No {@code test} of {@code metadata.resourceVersion} is added: removals are
 * per key and checked against the fresh read, so an unrelated status update in between (the
 * kubelet's heartbeat) needs no retry.
 *
 * <p>Idempotent: removing keys that are already gone is a no-op without an API write. Stateless
 * apart from the client, so safe to call from any thread; each call blocks for a few API requests.
 * Failures never escape as unchecked exceptions: they are logged with the node name and thrown as a
 * {@link TidyException}, which the caller may retry later.
 */
public final class NodeTidier {

  /** The prefix of the resources this agent owns: Instance and default class resources. */
  public static final String AKRI_PREFIX = "akri.sh/";

  /** How many read-then-patch attempts one call makes before giving up. */
  public static final int MAX_ATTEMPTS = 5;

  private static final Logger LOG = LoggerFactory.getLogger(NodeTidier.class);

  private final KubernetesClient client;
  private final String nodeName;

  public NodeTidier(KubernetesClient client, String nodeName) {
    this.client = Objects.requireNonNull(client, "client");
    this.nodeName = Objects.requireNonNull(nodeName, "nodeName");
  }

  /**
   * Removes the given resource names (e.g. {@code akri.sh/foo-8120fe}) from the Node's capacity and
   * allocatable, whatever their prefix. Names the Node does not carry are ignored.
   *
   * @return the names that were present in capacity or allocatable and have been removed
   * @throws TidyException if the Node cannot be read or patched (missing, API unavailable,
   *     forbidden, or still conflicting after {@value #MAX_ATTEMPTS} attempts)
   */
  public Set<String> removeResources(Collection<String> resourceNames) throws TidyException {
    Set<String> wanted = Set.copyOf(resourceNames);
    if (wanted.isEmpty()) {
      return Set.of();
    }
    return removeMatching(wanted::contains, "remove " + new TreeSet<>(wanted));
  }

  /**
   * Removes every {@code akri.sh/} key in the Node's capacity or allocatable that {@code
   * stillServed} rejects. Keys without that prefix (cpu, memory, other device plugins' resources,
   * the agent's own named classes) are never touched.
   *
   * @param stillServed true for resource names the agent serves now; must be side-effect free, it
   *     may be called more than once per name
   * @return the names that have been removed
   * @throws TidyException as for {@link #removeResources}
   */
  public Set<String> sweep(Predicate<String> stillServed) throws TidyException {
    Objects.requireNonNull(stillServed, "stillServed");
    return removeMatching(
        name -> name.startsWith(AKRI_PREFIX) && !stillServed.test(name), "sweep stale akri.sh/");
  }

  private Set<String> removeMatching(Predicate<String> remove, String what) throws TidyException {
    KubernetesClientException last = null;
    for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      Node node;
      try {
        node = client.nodes().withName(nodeName).get();
      } catch (KubernetesClientException e) {
        throw failure(what, "cannot read the Node: " + KubernetesInstanceStore.describe(e), e);
      }
      if (node == null) {
        throw failure(what, "the Node does not exist", null);
      }
      Map<String, Quantity> capacity = quantities(node, NodeStatus::getCapacity);
      Map<String, Quantity> allocatable = quantities(node, NodeStatus::getAllocatable);
      List<Map<String, Object>> patch = new ArrayList<>();
      Set<String> removed = new TreeSet<>();
      addRemovals(patch, removed, "/status/capacity/", capacity, remove);
      addRemovals(patch, removed, "/status/allocatable/", allocatable, remove);
      if (patch.isEmpty()) {
        return Set.of();
      }
      try {
        client
            .nodes()
            .withName(nodeName)
            .subresource("status")
            .patch(
                PatchContext.of(PatchType.JSON), client.getKubernetesSerialization().asJson(patch));
        LOG.info("Node({}): removed stale resources {} from status", nodeName, removed);
        return Set.copyOf(removed);
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 && e.getCode() != 422) {
          throw failure(
              what, "cannot patch the Node's status: " + KubernetesInstanceStore.describe(e), e);
        }
        // 422: a key we saw was removed before our patch arrived; 409: the object changed under
        // us. Both are resolved by reading again.
        LOG.debug("Node({}): {} attempt {} got {}; reading again", nodeName, what, attempt, e);
        last = e;
      }
    }
    throw failure(
        what,
        "still conflicting after "
            + MAX_ATTEMPTS
            + " attempts: "
            + (last == null ? "" : KubernetesInstanceStore.describe(last)),
        last);
  }

  private static Map<String, Quantity> quantities(
      Node node, Function<NodeStatus, Map<String, Quantity>> field) {
    if (node.getStatus() == null || field.apply(node.getStatus()) == null) {
      return Map.of();
    }
    return new LinkedHashMap<>(field.apply(node.getStatus()));
  }

  private static void addRemovals(
      List<Map<String, Object>> patch,
      Set<String> removed,
      String base,
      Map<String, Quantity> present,
      Predicate<String> remove) {
    for (String name : new TreeSet<>(present.keySet())) {
      if (remove.test(name)) {
        patch.add(Map.of("op", "remove", "path", base + JsonPointer.escape(name)));
        removed.add(name);
      }
    }
  }

  private TidyException failure(String what, String why, Exception cause) {
    String message = "Node(" + nodeName + "): cannot " + what + ": " + why;
    LOG.warn("{}", message);
    return new TidyException(message, cause);
  }

  /**
   * Tidying the Node failed. The Node is unchanged (one JSON patch is applied whole or not at all)
   * and a later call may succeed.
   */
  public static final class TidyException extends Exception {
    private static final long serialVersionUID = 1L;

    public TidyException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
