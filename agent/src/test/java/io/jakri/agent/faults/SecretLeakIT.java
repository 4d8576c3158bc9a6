package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.agent.EmulatedKubelet;
import io.jakri.agent.LogCapture;
import io.jakri.agent.cluster.RealApiPeer;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Secret-sourced discoveryProperties never reach a log line (at any level, stack traces included),
 * a Configuration's status, an Event or an Instance — neither when they resolve nor when a
 * reference is broken. On the real API server, the agent on its own ServiceAccount token.
 */
@ExtendWith(RealKube.class)
class SecretLeakIT {

  private String NS;

  KubernetesClient client;

  @TempDir Path tmp;

  @Test
  void secretValuesAppearInNoLogStatusEventOrInstance(RealApiServer api) throws Exception {
    String secret = "s3cr3t-" + UUID.randomUUID();
    RealApiPeer.installCrdsAndRbac(api);
    client = api.admin();
    NS = api.namespace("secret-leak");
    // In "default": where a reference without a namespace is read from (as Akri).
    client
        .secrets()
        .inNamespace("default")
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("leak-creds")
                .endMetadata()
                .withData(
                    Map.of(
                        "token",
                        Base64.getEncoder()
                            .encodeToString(secret.getBytes(StandardCharsets.UTF_8))))
                .build())
        .createOr(existing -> existing.update());
    String good = configuration("with-secret", "token");
    String broken = configuration("broken-ref", "no-such-key");
    for (String yaml : new String[] {good, broken}) {
      client
          .resources(Configuration.class)
          .inNamespace(NS)
          .resource(client.getKubernetesSerialization().unmarshal(yaml, Configuration.class))
          .create();
    }

    Logger jakri = (Logger) LoggerFactory.getLogger("io.jakri");
    Level previous = jakri.getLevel();
    LogCapture logs = LogCapture.root();
    jakri.setLevel(Level.ALL);
    try {
      Path dir = Files.createDirectories(tmp.resolve("node-a"));
      AgentOptions options =
          new AgentOptions(
                  "node-a",
                  false,
                  Optional.empty(),
                  true,
                  dir.resolve("device-plugins"),
                  dir.resolve("pod-resources").resolve("kubelet.sock"),
                  FaultAgent.PACKAGED_PLUGINS,
                  Duration.ofSeconds(60))
              .inCluster(NS, true);
      try (Agent agent = Agent.start(options, Optional.of(RealApiPeer.agentClient(api)))) {
        var kubelet = EmulatedKubelet.of(agent).orElseThrow();
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> kubelet.allocatable().getOrDefault("example.com/secret", -1L) == 1);
        await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () ->
                    agent.discovery().statuses().containsKey("broken-ref")
                        && !agent.discovery().statuses().get("broken-ref").message().isBlank());
        // Let status publication and events happen.
        await()
            .atMost(Duration.ofSeconds(20))
            .until(() -> !client.v1().events().inNamespace(NS).list().getItems().isEmpty());
      }
    } finally {
      logs.close();
      jakri.setLevel(previous);
    }

    int lines = 0;
    for (ILoggingEvent e : logs.events()) {
      String text =
          e.getFormattedMessage()
              + (e.getThrowableProxy() == null
                  ? ""
                  : ThrowableProxyUtil.asString(e.getThrowableProxy()));
      assertThat(text).as("log line from " + e.getLoggerName()).doesNotContain(secret);
      lines++;
    }
    String statuses =
        client.resources(Configuration.class).inNamespace(NS).list().getItems().toString();
    String events = client.v1().events().inNamespace(NS).list().getItems().toString();
    String instances =
        client.resources(Instance.class).inNamespace(NS).list().getItems().toString();
    assertThat(statuses).doesNotContain(secret);
    assertThat(events).doesNotContain(secret);
    assertThat(instances).doesNotContain(secret);
    assertThat(lines).isGreaterThan(10);
    System.out.printf(
        "SECRETS %d log lines (all levels), %d Events, Configuration statuses and Instances"
            + " checked%n",
        lines, client.v1().events().inNamespace(NS).list().getItems().size());
    System.out.println("FAULT secret-leak cases=2 recovered=2 lost=0");
  }

  private static String configuration(String name, String key) {
    return """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: %s
        spec:
          capacity: 1
          discoveryHandler:
            name: simulated
            discoveryDetails: |
              count: 1
              resourceName: example.com/%s
            discoveryProperties:
            - name: TOKEN
              valueFrom:
                secretKeyRef: {name: leak-creds, key: %s}
        """
        .formatted(name, name.equals("with-secret") ? "secret" : "broken", key);
  }
}
