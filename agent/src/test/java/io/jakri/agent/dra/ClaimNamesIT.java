package io.jakri.agent.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A claim's namespace and name go into the API path: the kubelet's names are checked as Kubernetes
 * names (namespace a DNS-1123 label, name a DNS-1123 subdomain) before any request, so {@code ..}
 * and {@code /} cannot walk the URL to another namespace or resource. Against fabric8's mock API
 * server, whose recorded requests show every path asked for.
 */
@EnableKubernetesMockClient(crud = true)
class ClaimNamesIT {

  static KubernetesMockServer server;
  static KubernetesClient client;

  private final ClaimPreparer preparer =
      // Claims refused by name, or not found, never reach the slots or the store.
      new ClaimPreparer("node-a", ClaimReader.of(client), null, null, null);

  private List<String> requestedPaths() throws InterruptedException {
    List<String> paths = new ArrayList<>();
    RecordedRequest r;
    while ((r = server.takeRequest(100, TimeUnit.MILLISECONDS)) != null) {
      paths.add(r.getPath());
    }
    return paths;
  }

  @Test
  void namesThatAreNoKubernetesNamesAreRefusedBeforeAnyRequest() throws Exception {
    requestedPaths(); // whatever earlier tests asked for
    List<ClaimPreparer.ClaimRef> bad =
        List.of(
            new ClaimPreparer.ClaimRef("..", "u1", "x"),
            new ClaimPreparer.ClaimRef("../kube-system", "u2", "x"),
            new ClaimPreparer.ClaimRef("default", "u3", "x/../../y"),
            new ClaimPreparer.ClaimRef("default", "u4", ".."),
            new ClaimPreparer.ClaimRef("default", "u5", "a%2f..%2fb"),
            new ClaimPreparer.ClaimRef("Default", "u6", "x"));

    List<String> errors = bad.stream().map(ref -> preparer.prepare(ref).error()).toList();

    assertThat(requestedPaths()).as("requests made").isEmpty();
    assertThat(errors.get(0))
        .isEqualTo(
            "ResourceClaim not read: namespace \"..\" is not a Kubernetes namespace name (a"
                + " DNS-1123 label: lowercase letters, digits and '-', at most 63 characters)");
    assertThat(errors.get(1)).contains("namespace \"../kube-system\" is not a Kubernetes");
    assertThat(errors.get(2))
        .isEqualTo(
            "ResourceClaim not read: name \"x/../../y\" is not a Kubernetes object name (a"
                + " DNS-1123 subdomain: lowercase letters, digits, '-' and '.', at most 253"
                + " characters)");
    assertThat(errors.get(3)).contains("name \"..\" is not a Kubernetes object name");
    assertThat(errors.get(4)).contains("name \"a%2f..%2fb\" is not");
    assertThat(errors.get(5)).contains("namespace \"Default\" is not");
    // The reader itself refuses them too, for any other caller.
    assertThatThrownBy(() -> ClaimReader.of(client).get("default", "x/../../y"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(requestedPaths()).isEmpty();
  }

  @Test
  void aKubernetesNameIsAskedForAtItsOwnPath() throws Exception {
    requestedPaths();

    ClaimPreparer.Result result =
        preparer.prepare(new ClaimPreparer.ClaimRef("team-a", "u7", "cam.claim-1"));

    assertThat(result.error()).isEqualTo("ResourceClaim team-a/cam.claim-1 not found");
    assertThat(requestedPaths())
        .containsExactly("/apis/resource.k8s.io/v1/namespaces/team-a/resourceclaims/cam.claim-1");
  }
}
