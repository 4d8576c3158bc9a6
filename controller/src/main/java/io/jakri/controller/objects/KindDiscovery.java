package io.jakri.controller.objects;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kinds of {@code --instance-object-resources}, resolved with the API server's discovery once
 * per controller process and shared by every namespace's controller and the admission webhook. A
 * failed discovery is tried again at the next {@link #resolve}. While an allowed resource is not
 * served (its CRD not installed yet), {@link #recheck} asks the discovery again, at most once per
 * {@link #recheckInterval}, and adopts kinds that appeared; a kind once served stays (a CRD deleted
 * later fails the writes of that kind, which the controller reports). Thread-safe.
 */
public final class KindDiscovery {

  private static final Logger LOG = LoggerFactory.getLogger(KindDiscovery.class);

  /** How often an unserved allowed resource is looked for again. */
  public static final Duration RECHECK = Duration.ofSeconds(30);

  private final KubernetesClient client;
  private final List<AllowedResource> allowed;
  private final Duration recheck;
  private volatile ObjectKinds kinds;
  private long lastCheck; // System.nanoTime() of the last discovery; guarded by this

  public KindDiscovery(KubernetesClient client, List<AllowedResource> allowed) {
    this(client, allowed, RECHECK);
  }

  /** {@code recheck}: how often an unserved resource is looked for again (tests shorten it). */
  public KindDiscovery(KubernetesClient client, List<AllowedResource> allowed, Duration recheck) {
    this.client = client;
    this.allowed = List.copyOf(allowed);
    this.recheck = recheck;
    this.kinds = this.allowed.isEmpty() ? ObjectKinds.none() : null;
  }

  /** Whether no kind is allowed (nothing to resolve). */
  public boolean none() {
    return allowed.isEmpty();
  }

  /** How often {@link #recheck} asks the discovery again while a resource is unserved. */
  public Duration recheckInterval() {
    return recheck;
  }

  /**
   * The kinds, resolved now with the API server's discovery unless an earlier call did.
   *
   * @throws KubernetesClientException when the discovery fails (try again later)
   */
  public ObjectKinds resolve() {
    ObjectKinds k = kinds;
    if (k != null) {
      return k;
    }
    synchronized (this) {
      if (kinds == null) {
        ObjectKinds found = ObjectKinds.resolve(client, allowed);
        found.log(
            "templates of that kind are refused until the API server serves it (looked for every "
                + io.jakri.logging.DurationText.of(recheck)
                + ")");
        lastCheck = System.nanoTime();
        kinds = found;
      }
      return kinds;
    }
  }

  /**
   * The kinds now: when an allowed resource was unserved at the last discovery and {@link
   * #recheckInterval} has passed since, the discovery is asked again first, and resources it serves
   * now are adopted (logged once). A failed discovery keeps the kinds as they were. Empty before
   * the first {@link #resolve}.
   */
  public Optional<ObjectKinds> recheck() {
    ObjectKinds k = kinds;
    if (k == null || !k.anyUnserved()) {
      return Optional.ofNullable(k);
    }
    synchronized (this) {
      long now = System.nanoTime();
      if (now - lastCheck < recheck.toNanos()) {
        return Optional.of(kinds);
      }
      lastCheck = now;
      try {
        ObjectKinds found = ObjectKinds.resolve(client, allowed);
        Set<ServedResource> before = new HashSet<>(kinds.served());
        List<ServedResource> added =
            found.served().stream().filter(s -> !before.contains(s)).toList();
        if (!added.isEmpty() && found.served().containsAll(before)) {
          LOG.info("instance objects may now also be: {}", ServedResource.describe(added));
          kinds = found;
        }
      } catch (KubernetesClientException e) {
        LOG.debug("discovery of --instance-object-resources failed: {}", e.toString());
      }
      return Optional.of(kinds);
    }
  }

  /** The kinds if resolved already. */
  public Optional<ObjectKinds> resolved() {
    return Optional.ofNullable(kinds);
  }
}
