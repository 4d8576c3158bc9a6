package io.jakri.agent.cluster;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.jakri.agent.configuration.ConfigurationSpec;
import io.jakri.agent.configuration.ConfigurationSpec.DiscoveryProperty;
import io.jakri.agent.configuration.ConfigurationSpec.KeyRef;
import io.jakri.agent.discovery.PropertyResolver;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * Cluster mode's {@link PropertyResolver}: literal {@code value}s as they are, {@code
 * valueFrom.secretKeyRef} and {@code valueFrom.configMapKeyRef} read from the API server.
 *
 * <ul>
 *   <li>A literal {@code value} wins when both are given; a property with neither is omitted (as
 *       {@link PropertyResolver#literalOnly()} does).
 *   <li>Secrets: only {@code data} is read, base64-decoded and taken as UTF-8. A real server never
 *       returns {@code stringData} (it folds it into {@code data} on write), so it is not looked
 *       at.
 *   <li>ConfigMaps: {@code data}, else {@code binaryData} (base64-decoded).
 *   <li>{@link #resolve} gives plugins text (the bytes taken as UTF-8); {@link #resolveBytes} gives
 *       Akri-protocol handlers the bytes as stored (Akri's {@code ByteData}).
 *   <li>The object is looked up in the reference's {@code namespace}, else in the Configuration's
 *       namespace.
 *   <li>{@code optional: true}: a missing object or key omits the property. Every other failure
 *       (forbidden, API unavailable, undecodable data) is an error whether optional or not, so an
 *       outage never silently changes what a handler is given.
 * </ul>
 *
 * <p>Error messages name the property, the object's kind, namespace/name and key, and never any
 * value read from a Secret or ConfigMap; nothing read is logged.
 *
 * <p>Stateless apart from the client: safe from any thread; each call blocks for one GET per
 * referenced property (no caching, so edits to Secrets are seen on the next resolve).
 */
public final class KubernetesPropertyResolver implements PropertyResolver {

  private final KubernetesClient client;
  private final Function<String, String> namespaceOfConfiguration;

  /**
   * @param namespaceOfConfiguration gives a Configuration's namespace from its name; may return
   *     null when unknown (then only references with an explicit namespace can be resolved)
   */
  public KubernetesPropertyResolver(
      KubernetesClient client, Function<String, String> namespaceOfConfiguration) {
    this.client = Objects.requireNonNull(client, "client");
    this.namespaceOfConfiguration =
        Objects.requireNonNull(namespaceOfConfiguration, "namespaceOfConfiguration");
  }

  /** For an agent that watches Configurations in one namespace. */
  public KubernetesPropertyResolver(KubernetesClient client, String namespace) {
    this(client, configuration -> namespace);
    Objects.requireNonNull(namespace, "namespace");
  }

  @Override
  public Map<String, String> resolve(ConfigurationSpec configuration) throws UnresolvableException {
    Map<String, String> values = new LinkedHashMap<>();
    resolveBytes(configuration)
        .forEach((name, bytes) -> values.put(name, new String(bytes, StandardCharsets.UTF_8)));
    return values;
  }

  /** Every property as bytes: literal values as UTF-8, Secret and ConfigMap values as stored. */
  public Map<String, byte[]> resolveBytes(ConfigurationSpec configuration)
      throws UnresolvableException {
    Map<String, byte[]> values = new LinkedHashMap<>();
    for (DiscoveryProperty property : configuration.discoveryProperties()) {
      if (property.value().isPresent()) {
        values.put(property.name(), property.value().get().getBytes(StandardCharsets.UTF_8));
      } else if (property.valueFrom().isPresent()) {
        read(configuration, property.name(), property.valueFrom().get())
            .ifPresent(value -> values.put(property.name(), value));
      }
    }
    return values;
  }

  private Optional<byte[]> read(ConfigurationSpec configuration, String property, KeyRef ref)
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
    try {
      return ref.kind() == KeyRef.Kind.SECRET
          ? secretValue(property, where, namespace.get(), ref)
          : configMapValue(property, where, namespace.get(), ref);
    } catch (KubernetesClientException e) {
      throw new UnresolvableException(
          prefix(property) + "cannot read " + where + ": " + describe(e));
    }
  }

  private Optional<byte[]> secretValue(String property, String where, String namespace, KeyRef ref)
      throws UnresolvableException {
    Secret secret = client.secrets().inNamespace(namespace).withName(ref.name()).get();
    if (secret == null) {
      return missing(property, where, ref, "the Secret does not exist");
    }
    String encoded = secret.getData() == null ? null : secret.getData().get(ref.key());
    if (encoded == null) {
      return missing(property, where, ref, "the Secret has no such key");
    }
    try {
      // A real server always sends standard base64 (it encodes the stored bytes); the value
      // itself is never part of a message.
      return Optional.of(Base64.getDecoder().decode(encoded));
    } catch (IllegalArgumentException e) {
      throw new UnresolvableException(
          prefix(property) + where + ": the Secret's data is not valid base64");
    }
  }

  private Optional<byte[]> configMapValue(
      String property, String where, String namespace, KeyRef ref) throws UnresolvableException {
    ConfigMap configMap = client.configMaps().inNamespace(namespace).withName(ref.name()).get();
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
      try {
        return Optional.of(Base64.getDecoder().decode(binary));
      } catch (IllegalArgumentException e) {
        throw new UnresolvableException(
            prefix(property) + where + ": the ConfigMap's binaryData is not valid base64");
      }
    }
    return missing(property, where, ref, "the ConfigMap has no such key");
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

  private static String describe(KubernetesClientException e) {
    // The server's Status message (e.g. "secrets "x" is forbidden: User ... cannot get ...")
    // names the request, never the object's contents.
    String message =
        e.getStatus() != null && e.getStatus().getMessage() != null
            ? e.getStatus().getMessage()
            : String.valueOf(e.getMessage());
    return e.getCode() > 0 ? "HTTP " + e.getCode() + " " + message : message;
  }
}
