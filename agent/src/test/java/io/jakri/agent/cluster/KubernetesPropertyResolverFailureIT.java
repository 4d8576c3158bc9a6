package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.jakri.agent.discovery.PropertyResolver.UnresolvableException;
import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.agent.model.ConfigurationSpec.DiscoveryProperty;
import io.jakri.agent.model.ConfigurationSpec.KeyRef;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@link KubernetesPropertyResolver} when the API server refuses: scripted answers.
 *
 * <p>Mock on purpose: the refusals are scripted answers a real server cannot be made to give.
 */
@EnableKubernetesMockClient(https = false)
class KubernetesPropertyResolverFailureIT {

  KubernetesClient client;
  KubernetesMockServer server;

  @Test
  void aForbiddenReadIsAnErrorEvenForAnOptionalReference() {
    server
        .expect()
        .get()
        .withPath("/api/v1/namespaces/devices/secrets/creds")
        .andReturn(
            403,
            new StatusBuilder()
                .withCode(403)
                .withStatus("Failure")
                .withReason("Forbidden")
                .withMessage("secrets \"creds\" is forbidden: User \"agent\" cannot get")
                .build())
        .always();
    KeyRef ref = new KeyRef(KeyRef.Kind.SECRET, "creds", "token", Optional.empty(), true);
    ConfigurationSpec config =
        new ConfigurationSpec(
            "cfg",
            "simulated",
            "",
            List.of(new DiscoveryProperty("TOKEN", Optional.empty(), Optional.of(ref))),
            1,
            Map.of(),
            Optional.empty());

    assertThatThrownBy(() -> new KubernetesPropertyResolver(client, "devices").resolve(config))
        .isInstanceOf(UnresolvableException.class)
        .hasMessageContaining("discoveryProperties TOKEN")
        .hasMessageContaining("cannot read Secret devices/creds key \"token\"")
        .hasMessageContaining("HTTP 403")
        .hasMessageContaining("forbidden");
  }
}
