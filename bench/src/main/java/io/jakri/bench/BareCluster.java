package io.jakri.bench;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The floor of the footprint figures: the least a JVM program must do to be the agent or the
 * controller in cluster mode, with the same libraries (fabric8 on the client the component uses,
 * gRPC on Netty). It builds one client from {@code KUBECONFIG}, keeps one informer on each kind the
 * component watches, prints {@code BARE_READY} once every informer has listed, and then, as the
 * agent, serves and registers N bare device-plugin servers ({@link BareServers}); as the
 * controller, it only keeps watching. No discovery, no reconciling, no logging. Usage: {@code
 * BareCluster agent <device-plugin-dir> <N>} or {@code BareCluster controller}.
 */
public final class BareCluster {

  private BareCluster() {}

  public static void main(String[] args) throws Exception {
    String role = args[0];
    KubernetesClient client = new KubernetesClientBuilder().build();
    List<SharedIndexInformer<?>> informers = new ArrayList<>();
    informers.add(
        client.genericKubernetesResources("akri.sh/v0", "Configuration").inAnyNamespace().inform());
    informers.add(
        client.genericKubernetesResources("akri.sh/v0", "Instance").inAnyNamespace().inform());
    if (role.equals("controller")) {
      informers.add(client.nodes().inform());
      informers.add(client.pods().inAnyNamespace().inform());
      informers.add(client.batch().v1().jobs().inAnyNamespace().inform());
      informers.add(client.services().inAnyNamespace().inform());
    }
    for (SharedIndexInformer<?> informer : informers) {
      informer.hasSynced(); // inform() returns once the informer has listed
    }
    System.out.println("BARE_READY " + informers.size() + " informers");
    System.out.flush();
    if (role.equals("agent")) {
      BareServers.main(new String[] {args[1], args[2]});
    } else {
      new CountDownLatch(1).await(); // runs until killed
    }
  }
}
