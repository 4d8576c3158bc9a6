package io.jakri.agent.cluster;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.jakri.agent.discovery.PropertyResolver;
import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.agent.model.ConfigurationSpec.DiscoveryProperty;
import io.jakri.agent.model.ConfigurationSpec.KeyRef;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cluster mode's {@link PropertyResolver}: literal {@code value}s as they are, {@code
 * valueFrom.secretKeyRef} and {@code valueFrom.configMapKeyRef} read from the API server, as Akri's
 * agent reads them.
 *
 * <ul>
 *   <li>A literal {@code value} wins when both are given; a property with neither is omitted (as
 *       {@link PropertyResolver#literalOnly()} does).
 *   <li>Values are bytes ({@link #resolveBytes}); the handler API's strings are their UTF-8 view.
 *   <li>Secrets: {@code data}, base64-decoded. A real server never returns {@code stringData} (it
 *       folds it into {@code data} on write), so it is not looked at.
 *   <li>ConfigMaps: {@code data}, else {@code binaryData} (its bytes).
 *   <li>The object is looked up in the reference's {@code namespace}, else in {@link
 *       #AKRI_DEFAULT_NAMESPACE} ({@code default}, Akri's default for a reference naming none; not
 *       the Configuration's namespace).
 *   <li>{@code optional: true}: a missing object or key omits the property. Every other failure
 *       (forbidden, API unavailable, undecodable data) is an error whether optional or not, so an
 *       outage never silently changes what a handler is given.
 * </ul>
 *
 * <p>Live values: every Secret and ConfigMap a Configuration referenced in its last resolve is
 * watched (by name, one watch per referenced object, none for anything else); when one is created,
 * changed or deleted, the listener given to {@link #onChange} is told the name of each
 * Configuration that references it, so its discovery runs again with the new value.
 *
 * <p>Error messages name the property, the object's kind, namespace/name and key, and never any
 * value read from a Secret or ConfigMap; nothing read is logged. Thread-safe; each resolve makes
 * one GET per referenced property (no caching, so a resolve always sees current values).
 */
public final class KubernetesPropertyResolver implements PropertyResolver, AutoCloseable {

  /** Akri's namespace for a reference that names none. */
  public static final String AKRI_DEFAULT_NAMESPACE = "default";

  private static final Logger LOG = LoggerFactory.getLogger(KubernetesPropertyResolver.class);

  private final KubernetesClient client;
  private final Function<String, String> namespaceOfConfiguration;
  private final Object lock = new Object();
  private final Map<String, Set<Watched>> referencesOf = new HashMap<>();
  private final Map<Watched, Watch> watches = new HashMap<>();
  private volatile Consumer<String> listener = name -> {};
  private volatile boolean watching;
  private volatile boolean closed;

  /** A referenced object. */
  private record Watched(KeyRef.Kind kind, String namespace, String name) {
    String describe() {
      return (kind == KeyRef.Kind.SECRET ? "Secret " : "ConfigMap ") + namespace + "/" + name;
    }
  }

  /** The watch of one referenced object and the resourceVersion last read (null: absent). */
  private static final class Watch {
    final SharedIndexInformer<? extends HasMetadata> informer;
    volatile String seenVersion;

    Watch(SharedIndexInformer<? extends HasMetadata> informer, String seenVersion) {
      this.informer = informer;
      this.seenVersion = seenVersion;
    }
  }

  /**
   * @param namespaceOfConfiguration gives the namespace a reference without one is read from, by
   *     the Configuration's name; may return null when unknown (then only references with an
   *     explicit namespace can be resolved)
   */
  public KubernetesPropertyResolver(
      KubernetesClient client, Function<String, String> namespaceOfConfiguration) {
    this.client = Objects.requireNonNull(client, "client");
    this.namespaceOfConfiguration =
        Objects.requireNonNull(namespaceOfConfiguration, "namespaceOfConfiguration");
  }

  /** References without a namespace are read from {@code namespace}. */
  public KubernetesPropertyResolver(KubernetesClient client, String namespace) {
    this(client, configuration -> namespace);
    Objects.requireNonNull(namespace, "namespace");
  }

  /** As Akri's agent: references without a namespace are read from {@code default}. */
  public static KubernetesPropertyResolver asAkri(KubernetesClient client) {
    return new KubernetesPropertyResolver(client, AKRI_DEFAULT_NAMESPACE);
  }

  /**
   * Watches the referenced Secrets and ConfigMaps from now on and tells {@code changed} the name of
   * each Configuration whose referenced object changed (on a watch thread).
   */
  public void onChange(Consumer<String> changed) {
    listener = Objects.requireNonNull(changed, "changed");
    watching = true;
  }

  /** Stops watching the objects of Configurations not in {@code configurations}. */
  public void retain(Collection<String> configurations) {
    synchronized (lock) {
      referencesOf.keySet().retainAll(Set.copyOf(configurations));
      closeUnreferenced();
    }
  }

  /** The objects watched now, as {@code Secret ns/name} / {@code ConfigMap ns/name}. */
  public Set<String> watched() {
    synchronized (lock) {
      Set<String> out = new HashSet<>();
      watches.keySet().forEach(w -> out.add(w.describe()));
      return out;
    }
  }

  @Override
  public void close() {
    synchronized (lock) {
      closed = true;
      watches.values().forEach(w -> w.informer.close());
      watches.clear();
      referencesOf.clear();
    }
  }

  @Override
  public Map<String, String> resolve(ConfigurationSpec configuration) throws UnresolvableException {
    Map<String, String> values = new LinkedHashMap<>();
    resolveBytes(configuration)
        .forEach((name, bytes) -> values.put(name, new String(bytes, StandardCharsets.UTF_8)));
    return values;
  }

  /** Every property's value as bytes (Secret data and ConfigMap binaryData are bytes). */
  @Override
  public Map<String, byte[]> resolveBytes(ConfigurationSpec configuration)
      throws UnresolvableException {
    Map<String, byte[]> values = new LinkedHashMap<>();
    Map<Watched, String> seen = new LinkedHashMap<>();
    try {
      for (DiscoveryProperty property : configuration.discoveryProperties()) {
        if (property.value().isPresent()) {
          values.put(property.name(), property.value().get().getBytes(StandardCharsets.UTF_8));
        } else if (property.valueFrom().isPresent()) {
          read(configuration, property.name(), property.valueFrom().get(), seen)
              .ifPresent(value -> values.put(property.name(), value));
        }
      }
    } finally {
      // Also after a failure: a missing Secret that appears later restarts discovery.
      remember(configuration.name(), seen);
    }
    return values;
  }

  private Optional<byte[]> read(
      ConfigurationSpec configuration, String property, KeyRef ref, Map<Watched, String> seen)
      throws UnresolvableException {
    String kind = ref.kind() == KeyRef.Kind.SECRET ? "Secret" : "ConfigMap";
    Optional<String> namespace =
        ref.namespace()
            .filter(ns -> !ns.isBlank())
            .or(() -> Optional.ofNullable(namespaceOfConfiguration.apply(configuration.name())));
    if (namespace.isEmpty()) {
      throw new UnresolvableException(
          prefix(property)
              + kind
              + " "
              + ref.name()
              + " has no namespace and the namespace of Configuration "
              + configuration.name()
              + " is unknown");
    }
    String where = kind + " " + namespace.get() + "/" + ref.name() + " key \"" + ref.key() + "\"";
    Watched watched = new Watched(ref.kind(), namespace.get(), ref.name());
    try {
      return ref.kind() == KeyRef.Kind.SECRET
          ? secretValue(property, where, namespace.get(), ref, watched, seen)
          : configMapValue(property, where, namespace.get(), ref, watched, seen);
    } catch (KubernetesClientException e) {
      seen.putIfAbsent(watched, null);
      throw new UnresolvableException(
          prefix(property) + "cannot read " + where + ": " + KubernetesInstanceStore.describe(e));
    }
  }

  private Optional<byte[]> secretValue(
      String property,
      String where,
      String namespace,
      KeyRef ref,
      Watched watched,
      Map<Watched, String> seen)
      throws UnresolvableException {
    Secret secret = client.secrets().inNamespace(namespace).withName(ref.name()).get();
    seen.put(watched, secret == null ? null : secret.getMetadata().getResourceVersion());
    if (secret == null) {
      return missing(property, where, ref, "the Secret does not exist");
    }
    String encoded = secret.getData() == null ? null : secret.getData().get(ref.key());
    if (encoded == null) {
      return missing(property, where, ref, "the Secret has no such key");
    }
    return Optional.of(decode(property, where, "the Secret's data", encoded));
  }

  private Optional<byte[]> configMapValue(
      String property,
      String where,
      String namespace,
      KeyRef ref,
      Watched watched,
      Map<Watched, String> seen)
      throws UnresolvableException {
    ConfigMap configMap = client.configMaps().inNamespace(namespace).withName(ref.name()).get();
    seen.put(watched, configMap == null ? null : configMap.getMetadata().getResourceVersion());
    if (configMap == null) {
      return missing(property, where, ref, "the ConfigMap does not exist");
    }
    String value = configMap.getData() == null ? null : configMap.getData().get(ref.key());
    if (value != null) {
      return Optional.of(value.getBytes(StandardCharsets.UTF_8));
    }
    String binary =
        configMap.getBinaryData() == null ? null : configMap.getBinaryData().get(ref.key());
    if (binary != null) {
      return Optional.of(decode(property, where, "the ConfigMap's binaryData", binary));
    }
    return missing(property, where, ref, "the ConfigMap has no such key");
  }

  private static byte[] decode(String property, String where, String what, String encoded)
      throws UnresolvableException {
    try {
      // A real server always sends standard base64 (it encodes the stored bytes); the value
      // itself is never part of a message.
      return Base64.getDecoder().decode(encoded);
    } catch (IllegalArgumentException e) {
      throw new UnresolvableException(
          prefix(property) + where + ": " + what + " is not valid base64");
    }
  }

  // ---- live values ----

  private void remember(String configuration, Map<Watched, String> seen) {
    if (!watching) {
      return;
    }
    synchronized (lock) {
      if (closed) {
        return;
      }
      referencesOf.put(configuration, Set.copyOf(seen.keySet()));
      seen.forEach(
          (w, version) -> {
            Watch existing = watches.get(w);
            if (existing != null) {
              existing.seenVersion = version;
            } else {
              watches.put(w, open(w, version));
            }
          });
      closeUnreferenced();
    }
  }

  private void closeUnreferenced() {
    Set<Watched> referenced = new HashSet<>();
    referencesOf.values().forEach(referenced::addAll);
    watches
        .entrySet()
        .removeIf(
            e -> {
              if (referenced.contains(e.getKey())) {
                return false;
              }
              e.getValue().informer.close();
              return true;
            });
  }

  private Watch open(Watched w, String version) {
    SharedIndexInformer<? extends HasMetadata> informer =
        w.kind() == KeyRef.Kind.SECRET
            ? client.secrets().inNamespace(w.namespace()).withName(w.name()).runnableInformer(0)
            : client.configMaps().inNamespace(w.namespace()).withName(w.name()).runnableInformer(0);
    Watch watch = new Watch(informer, version);
    informer.exceptionHandler(
        (started, t) -> {
          LOG.warn(
              "watch of {} failed, retrying: {}",
              w.describe(),
              io.jakri.logging.ApiFailure.describe(String.valueOf(client.getMasterUrl()), t));
          return true;
        });
    addHandler(informer, w, watch);
    informer.start();
    return watch;
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private void addHandler(SharedIndexInformer informer, Watched w, Watch watch) {
    informer.addEventHandler(
        new ResourceEventHandler<HasMetadata>() {
          @Override
          public void onAdd(HasMetadata obj) {
            seen(w, watch, obj.getMetadata().getResourceVersion());
          }

          @Override
          public void onUpdate(HasMetadata oldObj, HasMetadata newObj) {
            seen(w, watch, newObj.getMetadata().getResourceVersion());
          }

          @Override
          public void onDelete(HasMetadata obj, boolean finalStateUnknown) {
            seen(w, watch, null);
          }
        });
  }

  /** A watch event: when it differs from what the last resolve read, the users resolve again. */
  private void seen(Watched w, Watch watch, String version) {
    Set<String> users = new HashSet<>();
    synchronized (lock) {
      if (closed || watches.get(w) != watch || Objects.equals(watch.seenVersion, version)) {
        return;
      }
      watch.seenVersion = version;
      referencesOf.forEach(
          (configuration, refs) -> {
            if (refs.contains(w)) {
              users.add(configuration);
            }
          });
    }
    for (String configuration : users) {
      LOG.info(
          "configuration {}: {} {}; running its discovery again",
          configuration,
          w.describe(),
          version == null ? "was deleted" : "changed");
      try {
        listener.accept(configuration);
      } catch (RuntimeException e) {
        LOG.error("configuration {}: restarting discovery failed: {}", configuration, e.toString());
      }
    }
  }

  private static Optional<byte[]> missing(String property, String where, KeyRef ref, String why)
      throws UnresolvableException {
    if (ref.optional()) {
      return Optional.empty();
    }
    throw new UnresolvableException(prefix(property) + where + ": " + why);
  }

  private static String prefix(String property) {
    return "discoveryProperties " + property + ": ";
  }
}
