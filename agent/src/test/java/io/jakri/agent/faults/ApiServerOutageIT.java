package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.agent.EmulatedKubelet;
import io.jakri.agent.TestAgent;
import io.jakri.crd.Configuration;
import io.jakri.crd.Crds;
import io.jakri.crd.Instance;
import io.jakri.kubelet.emulator.AdmissionException;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.kubelet.emulator.Pod;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The API server becomes unreachable for {@code jakri.outage.seconds} (default 60) while a
 * cluster-mode agent runs (a TCP proxy in front of fabric8's mock server is cut, so the server
 * keeps its state): the devices keep being served from what the agent knows; an Allocate meanwhile
 * is refused, since a claim the agent cannot write to the Instance could be granted to another node
 * as well (the kubelet fails that pod's admission); the agent reconnects, the claim made before the
 * outage is still the only one, the rest can be allocated again, and there are no duplicate
 * Instances. CI runs a 20 s outage (agent/pom.xml).
 *
 * <p>Mock on purpose: a TCP proxy in front of it is cut mid-stream for a minute while the server
 * keeps its state; the real server's restart is shown in RealApiServerDifferencesIT.
 */
@EnableKubernetesMockClient(crud = true, https = false)
class ApiServerOutageIT {

  private static final Duration OUTAGE =
      Duration.ofSeconds(Integer.getInteger("jakri.outage.seconds", 60));
  private static final String SIM = "example.com/sim";
  private static final String NS = "default";

  KubernetesMockServer server;
  KubernetesClient client;

  @TempDir Path tmp;

  @Test
  void devicesKeepServingThroughAnOutageAndClaimsAreReconciledAfterwards() throws Exception {
    for (CustomResourceDefinition crd : Crds.load()) {
      client.apiextensions().v1().customResourceDefinitions().resource(crd).create();
    }
    try (OutageProxy proxy = new OutageProxy(server.getHostName(), server.getPort())) {
      KubernetesClient viaProxy =
          server.createClient(
              b ->
                  b.editOrNewConfig()
                      .withMasterUrl("http://127.0.0.1:" + proxy.port())
                      .withRequestRetryBackoffLimit(Agent.API_RETRIES)
                      .withRequestRetryBackoffInterval(Agent.API_RETRY_INTERVAL_MS)
                      .endConfig());
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
                  Duration.ofSeconds(60),
                  Duration.ofMinutes(10))
              .inCluster(NS, true);
      Configuration sim =
          client
              .getKubernetesSerialization()
              .unmarshal(
                  TestAgent.configuration(
                      "sim", "simulated", 1, "count: 4\nresourceName: " + SIM + "\nshared: true"),
                  Configuration.class);
      client.resources(Configuration.class).inNamespace(NS).resource(sim).create();
      try (Agent agent = Agent.start(options, Optional.of(viaProxy))) {
        KubeletEmulator kubelet = EmulatedKubelet.of(agent).orElseThrow();
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> kubelet.allocatable().getOrDefault(SIM, -1L) == 4);
        await().atMost(Duration.ofSeconds(10)).until(() -> instances().size() == 4);
        admit(kubelet, "before", 1);

        proxy.down();
        long outageStart = System.nanoTime();
        List<String> admittedDuring = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicInteger refused =
            new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicLong checks =
            new java.util.concurrent.atomic.AtomicLong();
        // During the outage: the kubelet keeps seeing every device; pods are tried every 5 s.
        Duration left = OUTAGE.minusNanos(System.nanoTime() - outageStart);
        await()
            .pollDelay(Duration.ZERO)
            .pollInterval(Duration.ofSeconds(5))
            .during(left)
            .atMost(left.plusSeconds(10))
            .until(
                () -> {
                  assertThat(kubelet.allocatable().getOrDefault(SIM, -1L)).isEqualTo(4);
                  checks.incrementAndGet();
                  String pod = "during-" + checks.get();
                  try {
                    admit(kubelet, pod, 1);
                    admittedDuring.add(pod);
                  } catch (AdmissionException e) {
                    refused.incrementAndGet();
                  }
                  return true;
                });
        int refusedDuring = refused.get();
        long servingChecks = checks.get();
        // No claim without its write: every pod tried during the outage was refused.
        assertThat(admittedDuring).isEmpty();
        assertThat(refusedDuring).isEqualTo(servingChecks).isPositive();
        proxy.up();
        long reconnect = System.nanoTime();

        // Afterwards: exactly the 4 Instances, and every live pod's slot is claimed in them.
        int expectedHeld = 1 + admittedDuring.size();
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> slotsHeldInServer() == expectedHeld && agent.clusterSynced());
        long reconciledMs = (System.nanoTime() - reconnect) / 1_000_000;
        assertThat(instances()).hasSize(4);
        assertThat(instances().stream().map(i -> i.getMetadata().getName()).distinct()).hasSize(4);
        // The rest can still be allocated, and no slot is held twice.
        int free = 4 - expectedHeld;
        admit(kubelet, "after", free);
        await().atMost(Duration.ofSeconds(30)).until(() -> slotsHeldInServer() == 4);
        Map<String, Integer> holders = new HashMap<>();
        for (Instance i : instances()) {
          i.getSpec().getDeviceUsage().forEach((slot, use) -> holders.merge(slot, 1, Integer::sum));
        }
        assertThat(holders.values()).allMatch(c -> c == 1);
        System.out.printf(
            "API-OUTAGE %d s: %d serving checks passed, %d pods admitted and %d refused during the"
                + " outage, claims reconciled %d ms after the server came back%n",
            OUTAGE.toSeconds(), servingChecks, admittedDuring.size(), refusedDuring, reconciledMs);
        System.out.printf(
            "FAULT api-server-outage cases=1 recovered=1 lost=0 (claims during outage=%d)%n",
            admittedDuring.size());
      }
    }
  }

  private static void admit(KubeletEmulator kubelet, String pod, int devices)
      throws AdmissionException {
    kubelet.admit(Pod.of(NS, pod, Container.of("c", SIM, devices)));
  }

  private List<Instance> instances() {
    return client.resources(Instance.class).inNamespace(NS).list().getItems();
  }

  private long slotsHeldInServer() {
    return instances().stream()
        .flatMap(i -> i.getSpec().getDeviceUsage().values().stream())
        .filter(u -> !u.isEmpty())
        .count();
  }
}
