package io.jakri.agent.external;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.agent.cluster.RealApiPeer;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import io.jakri.crd.InstanceNames;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster mode with the Python handler: {@code discoveryProperties} from a Secret and a ConfigMap
 * ({@code data} and {@code binaryData}) reach it as bytes exactly as stored, its device becomes an
 * Instance in the API server, and its {@code InvalidArgument} becomes the node's Invalid state in
 * the Configuration's status and an InvalidConfiguration Event. On the real API server, the agent
 * on its own ServiceAccount token (so reading the Secret and the ConfigMap is what its RBAC
 * allows).
 */
@ExtendWith(RealKube.class)
class ExternalHandlerClusterIT {

  String NS;
  static final String NODE = "node-a";

  /** Not UTF-8: must arrive as stored. */
  static final byte[] BLOB = {(byte) 0xff, 0, (byte) 0xc3, 'x'};

  KubernetesClient client;

  @TempDir Path tmp;

  @Test
  void propertiesFromSecretsAndConfigMapsAndInvalidArgumentInClusterMode(RealApiServer api)
      throws Exception {
    AkriPeer.generate();
    RealApiPeer.installCrdsAndRbac(api);
    client = api.admin();
    NS = api.namespace("external");
    String secret = "s3cr\u00e9t \u2603";
    // References without a namespace are read from "default", as Akri's agent does, whatever the
    // Configuration's namespace.
    client
        .secrets()
        .inNamespace("default")
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("creds")
                .endMetadata()
                .withData(
                    Map.of(
                        "token",
                        Base64.getEncoder().encodeToString(secret.getBytes(StandardCharsets.UTF_8)),
                        "raw",
                        Base64.getEncoder().encodeToString(BLOB)))
                .build())
        .createOr(existing -> existing.update());
    client
        .configMaps()
        .inNamespace("default")
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("settings")
                .endMetadata()
                .withData(Map.of("subnet", "10.0.0.0/24"))
                .withBinaryData(Map.of("blob", Base64.getEncoder().encodeToString(BLOB)))
                .build())
        .createOr(existing -> existing.update());
    Path akri = tmp.resolve("akri");
    Files.createDirectories(akri);
    try (AkriPeer good =
            AkriPeer.uds(akri, "pycluster", "pycluster.sock", true, Duration.ofSeconds(1));
        AkriPeer bad = AkriPeer.uds(akri, "pybad", "pybad.sock", false, Duration.ofSeconds(1))) {
      good.devices("rtsp://cam");
      bad.send("{\"invalid\": \"filter must be a list\"}");
      Path dir = Files.createDirectories(tmp.resolve(NODE));
      AgentOptions options =
          new AgentOptions(
                  NODE,
                  false,
                  Optional.empty(),
                  true,
                  dir.resolve("device-plugins"),
                  dir.resolve("pod-resources").resolve("kubelet.sock"),
                  Path.of("target", "plugins").toAbsolutePath(),
                  Duration.ofSeconds(60))
              .inCluster(NS, true)
              .withExternalHandlers(
                  Optional.of(
                      new ExternalHandlers.Options(
                          akri,
                          new ExternalHandlers.Settings(
                              Duration.ofSeconds(3),
                              Duration.ofSeconds(3),
                              Duration.ofSeconds(2),
                              50))));
      try (Agent agent = Agent.start(options, Optional.of(RealApiPeer.agentClient(api)))) {
        good.awaitRegistered();
        bad.awaitRegistered();
        create(
            """
            apiVersion: akri.sh/v0
            kind: Configuration
            metadata:
              name: cams
            spec:
              capacity: 1
              discoveryHandler:
                name: pycluster
                discoveryDetails: "{}"
                discoveryProperties:
                - name: token
                  valueFrom:
                    secretKeyRef: {name: creds, key: token}
                - name: subnet
                  valueFrom:
                    configMapKeyRef: {name: settings, key: subnet}
                - name: blob
                  valueFrom:
                    configMapKeyRef: {name: settings, key: blob}
                - name: raw
                  valueFrom:
                    secretKeyRef: {name: creds, key: raw}
            """);
        create(
            """
            apiVersion: akri.sh/v0
            kind: Configuration
            metadata:
              name: refused
            spec:
              capacity: 1
              discoveryHandler:
                name: pybad
                discoveryDetails: "filter: 7"
            """);
        String instance = InstanceNames.instanceName("cams", "rtsp://cam", true, NODE);
        await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () ->
                    client.resources(Instance.class).inNamespace(NS).withName(instance).get()
                        != null);
        JsonNode discover = good.awaitEvent("discover", e -> true);
        assertThat(decode(discover, "token")).isEqualTo(secret.getBytes(StandardCharsets.UTF_8));
        assertThat(decode(discover, "subnet"))
            .isEqualTo("10.0.0.0/24".getBytes(StandardCharsets.UTF_8));
        assertThat(decode(discover, "blob")).isEqualTo(BLOB);
        assertThat(decode(discover, "raw")).isEqualTo(BLOB);

        await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () ->
                    client.v1().events().inNamespace(NS).list().getItems().stream()
                        .anyMatch(
                            e ->
                                "InvalidConfiguration".equals(e.getReason())
                                    && e.getMessage().contains("filter must be a list")));
        Event event =
            client.v1().events().inNamespace(NS).list().getItems().stream()
                .filter(e -> "InvalidConfiguration".equals(e.getReason()))
                .findFirst()
                .orElseThrow();
        assertThat(event.getInvolvedObject().getName()).isEqualTo("refused");
        String status =
            client
                .getKubernetesSerialization()
                .asJson(
                    client
                        .resources(Configuration.class)
                        .inNamespace(NS)
                        .withName("refused")
                        .get()
                        .getStatus());
        assertThat(status).contains("Invalid").contains("InvalidArgument");
      }
    }
  }

  private static byte[] decode(JsonNode discover, String property) {
    return Base64.getDecoder().decode(discover.path("properties").path(property).asText());
  }

  private void create(String yaml) {
    client
        .resources(Configuration.class)
        .inNamespace(NS)
        .resource(client.getKubernetesSerialization().unmarshal(yaml, Configuration.class))
        .create();
  }
}
