package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.jakri.agent.discovery.PropertyResolver.UnresolvableException;
import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.agent.model.ConfigurationSpec.DiscoveryProperty;
import io.jakri.agent.model.ConfigurationSpec.KeyRef;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@link KubernetesPropertyResolver} against fabric8's mock API server in CRUD mode.
 *
 * <p>Mock on purpose: one fresh server per test for the resolver alone; the same resolver reads
 * Secrets and ConfigMaps on the real server with the agent's RBAC in ExternalHandlerClusterIT.
 */
@EnableKubernetesMockClient(crud = true, https = false)
class KubernetesPropertyResolverIT {

  private static final String NS = "devices";
  private static final String SECRET_VALUE = "hunter2-do-not-print";

  KubernetesClient client;

  @Test
  void aLiteralValueWinsOverValueFrom() throws Exception {
    var resolver = new KubernetesPropertyResolver(client, NS);

    var values =
        resolver.resolve(
            config(
                new DiscoveryProperty(
                    "URL",
                    Optional.of("http://literal"),
                    Optional.of(secretRef("no-such-secret", "url", false)))));

    assertThat(values).containsExactly(Map.entry("URL", "http://literal"));
  }

  @Test
  void aSecretKeyIsReadFromDataAndDecoded() throws Exception {
    createSecret(NS, "creds", Map.of("password", SECRET_VALUE, "user", "admin"));

    var values =
        new KubernetesPropertyResolver(client, NS)
            .resolve(
                config(
                    fromRef("PASSWORD", secretRef("creds", "password", false)),
                    fromRef("USER", secretRef("creds", "user", false)),
                    literal("MODE", "fast")));

    assertThat(values)
        .containsExactly(
            Map.entry("PASSWORD", SECRET_VALUE),
            Map.entry("USER", "admin"),
            Map.entry("MODE", "fast"));
  }

  @Test
  void aConfigMapKeyIsReadFromData() throws Exception {
    client
        .configMaps()
        .inNamespace(NS)
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("settings")
                .endMetadata()
                .addToData("interval", "30s")
                .build())
        .create();

    var values =
        new KubernetesPropertyResolver(client, NS)
            .resolve(config(fromRef("INTERVAL", configMapRef("settings", "interval", false))));

    assertThat(values).containsExactly(Map.entry("INTERVAL", "30s"));
  }

  @Test
  void theNamespaceDefaultsToTheConfigurationsOwn() throws Exception {
    createSecret("team-a", "creds", Map.of("token", "from-team-a"));
    createSecret("team-b", "creds", Map.of("token", "from-team-b"));
    var resolver =
        new KubernetesPropertyResolver(
            client, configuration -> configuration.equals("cfg") ? "team-b" : null);

    var values = resolver.resolve(config(fromRef("TOKEN", secretRef("creds", "token", false))));

    assertThat(values).containsExactly(Map.entry("TOKEN", "from-team-b"));
  }

  @Test
  void anExplicitNamespaceOnTheReferenceWins() throws Exception {
    createSecret("team-a", "creds", Map.of("token", "from-team-a"));
    createSecret(NS, "creds", Map.of("token", "from-default"));
    KeyRef ref = new KeyRef(KeyRef.Kind.SECRET, "creds", "token", Optional.of("team-a"), false);

    var values = new KubernetesPropertyResolver(client, NS).resolve(config(fromRef("TOKEN", ref)));

    assertThat(values).containsExactly(Map.entry("TOKEN", "from-team-a"));
  }

  @Test
  void anUnknownConfigurationNamespaceIsAnError() {
    var resolver = new KubernetesPropertyResolver(client, configuration -> null);

    assertThatThrownBy(
            () -> resolver.resolve(config(fromRef("TOKEN", secretRef("creds", "token", false)))))
        .isInstanceOf(UnresolvableException.class)
        .hasMessageContaining("TOKEN")
        .hasMessageContaining("namespace of Configuration cfg is unknown");
  }

  @Test
  void optionalReferencesToMissingObjectsOrKeysAreOmitted() throws Exception {
    createSecret(NS, "creds", Map.of("user", "admin"));

    var values =
        new KubernetesPropertyResolver(client, NS)
            .resolve(
                config(
                    fromRef("NO_OBJECT", secretRef("no-such-secret", "x", true)),
                    fromRef("NO_KEY", secretRef("creds", "password", true)),
                    fromRef("NO_MAP", configMapRef("no-such-map", "x", true)),
                    fromRef("USER", secretRef("creds", "user", true))));

    assertThat(values).containsExactly(Map.entry("USER", "admin"));
  }

  @Test
  void aMissingSecretKeyNamesPropertyObjectAndKeyButNoValue() {
    createSecret(NS, "creds", Map.of("password", SECRET_VALUE));

    assertThatThrownBy(
            () ->
                new KubernetesPropertyResolver(client, NS)
                    .resolve(config(fromRef("API_KEY", secretRef("creds", "api-key", false)))))
        .isInstanceOf(UnresolvableException.class)
        .hasMessageContaining("discoveryProperties API_KEY")
        .hasMessageContaining("Secret " + NS + "/creds")
        .hasMessageContaining("\"api-key\"")
        .hasMessageContaining("no such key")
        .hasMessageNotContaining(SECRET_VALUE)
        .hasMessageNotContaining(encode(SECRET_VALUE));
  }

  @Test
  void aMissingSecretNamesPropertyAndObject() {
    assertThatThrownBy(
            () ->
                new KubernetesPropertyResolver(client, NS)
                    .resolve(config(fromRef("API_KEY", secretRef("absent", "api-key", false)))))
        .isInstanceOf(UnresolvableException.class)
        .hasMessageContaining("discoveryProperties API_KEY")
        .hasMessageContaining("Secret " + NS + "/absent")
        .hasMessageContaining("does not exist");
  }

  @Test
  void undecodableSecretDataIsAnErrorThatDoesNotEchoTheData() {
    String garbage = "%%" + SECRET_VALUE + "%%";
    client
        .secrets()
        .inNamespace(NS)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("broken")
                .endMetadata()
                .addToData("key", garbage)
                .build())
        .create();

    assertThatThrownBy(
            () ->
                new KubernetesPropertyResolver(client, NS)
                    .resolve(config(fromRef("KEY", secretRef("broken", "key", true)))))
        .isInstanceOf(UnresolvableException.class)
        .hasMessageContaining("not valid base64")
        .hasMessageNotContaining(SECRET_VALUE);
  }

  @Test
  void secretStringDataIsNotReadBecauseARealServerNeverReturnsIt() {
    // The mock keeps stringData as written; a real server folds it into data.
    client
        .secrets()
        .inNamespace(NS)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("plain")
                .endMetadata()
                .addToStringData("key", SECRET_VALUE)
                .build())
        .create();

    assertThatThrownBy(
            () ->
                new KubernetesPropertyResolver(client, NS)
                    .resolve(config(fromRef("KEY", secretRef("plain", "key", false)))))
        .isInstanceOf(UnresolvableException.class)
        .hasMessageContaining("no such key")
        .hasMessageNotContaining(SECRET_VALUE);
  }

  @Test
  void configMapBinaryDataIsReadAsBytesWhenDataHasNoSuchKey() throws Exception {
    byte[] firmware = {0x01, (byte) 0xff, 0x00, 0x7f};
    client
        .configMaps()
        .inNamespace(NS)
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("blobs")
                .endMetadata()
                .addToBinaryData("firmware", Base64.getEncoder().encodeToString(firmware))
                .addToData("name", "text wins for its own key")
                .build())
        .create();

    var values =
        new KubernetesPropertyResolver(client, NS)
            .resolveBytes(
                config(
                    fromRef("FW", configMapRef("blobs", "firmware", false)),
                    fromRef("NAME", configMapRef("blobs", "name", false))));

    assertThat(values.get("FW")).containsExactly(firmware);
    assertThat(new String(values.get("NAME"), StandardCharsets.UTF_8))
        .isEqualTo("text wins for its own key");
  }

  @Test
  void secretValuesAreTheDecodedBytes() throws Exception {
    byte[] key = {0x00, (byte) 0x80, (byte) 0xfe};
    client
        .secrets()
        .inNamespace(NS)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("keys")
                .endMetadata()
                .addToData("raw", Base64.getEncoder().encodeToString(key))
                .build())
        .create();

    var values =
        new KubernetesPropertyResolver(client, NS)
            .resolveBytes(config(fromRef("KEY", secretRef("keys", "raw", false))));

    assertThat(values.get("KEY")).containsExactly(key);
  }

  @Test
  void asAkriAReferenceWithoutNamespaceReadsTheDefaultNamespace() throws Exception {
    createSecret("default", "creds", Map.of("token", "from-default"));
    createSecret(NS, "creds", Map.of("token", "from-devices"));

    var values =
        KubernetesPropertyResolver.asAkri(client)
            .resolve(config(fromRef("TOKEN", secretRef("creds", "token", false))));

    assertThat(values).containsExactly(Map.entry("TOKEN", "from-default"));
  }

  @Test
  void aChangedReferencedObjectTellsOnlyTheConfigurationsReferencingIt() throws Exception {
    createSecret(NS, "creds", Map.of("token", "one"));
    createSecret(NS, "unrelated", Map.of("token", "x"));
    List<String> told = new java.util.concurrent.CopyOnWriteArrayList<>();
    try (var resolver = new KubernetesPropertyResolver(client, NS)) {
      resolver.onChange(told::add);
      ConfigurationSpec cfg = config(fromRef("TOKEN", secretRef("creds", "token", false)));
      assertThat(resolver.resolve(cfg)).containsEntry("TOKEN", "one");
      assertThat(resolver.watched()).containsExactly("Secret " + NS + "/creds");

      client
          .secrets()
          .inNamespace(NS)
          .withName("unrelated")
          .edit(s -> new SecretBuilder(s).addToData("token", encode("y")).build());
      client
          .secrets()
          .inNamespace(NS)
          .withName("creds")
          .edit(s -> new SecretBuilder(s).addToData("token", encode("two")).build());

      org.awaitility.Awaitility.await()
          .atMost(java.time.Duration.ofSeconds(10))
          .until(() -> told.contains("cfg"));
      assertThat(told).containsOnly("cfg");
      assertThat(resolver.resolve(cfg)).containsEntry("TOKEN", "two");

      resolver.retain(List.of());
      assertThat(resolver.watched()).isEmpty();
    }
  }

  private void createSecret(String namespace, String name, Map<String, String> plain) {
    var builder = new SecretBuilder().withNewMetadata().withName(name).endMetadata();
    plain.forEach((k, v) -> builder.addToData(k, encode(v)));
    client.secrets().inNamespace(namespace).resource(builder.build()).create();
  }

  private static String encode(String value) {
    return Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8));
  }

  private static ConfigurationSpec config(DiscoveryProperty... properties) {
    return new ConfigurationSpec(
        "cfg", "simulated", "", List.of(properties), 1, Map.of(), Optional.empty());
  }

  private static DiscoveryProperty literal(String name, String value) {
    return new DiscoveryProperty(name, Optional.of(value), Optional.empty());
  }

  private static DiscoveryProperty fromRef(String name, KeyRef ref) {
    return new DiscoveryProperty(name, Optional.empty(), Optional.of(ref));
  }

  private static KeyRef secretRef(String name, String key, boolean optional) {
    return new KeyRef(KeyRef.Kind.SECRET, name, key, Optional.empty(), optional);
  }

  private static KeyRef configMapRef(String name, String key, boolean optional) {
    return new KeyRef(KeyRef.Kind.CONFIG_MAP, name, key, Optional.empty(), optional);
  }
}
