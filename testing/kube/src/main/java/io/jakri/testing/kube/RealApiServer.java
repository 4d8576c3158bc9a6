package io.jakri.testing.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real etcd and kube-apiserver on loopback, RBAC on, all state under one directory. Tests get an
 * admin client (group {@code system:masters}, a static token) and clients that authenticate as a
 * service account with a token from the TokenRequest API, so what a component may do is decided by
 * the RBAC objects the test applied, exactly as in a cluster. No kube-controller-manager runs:
 * nothing creates a namespace's {@code default} ServiceAccount, nothing garbage-collects owned
 * objects.
 */
public final class RealApiServer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(RealApiServer.class);
  private static final String ADMIN_TOKEN = "jakri-test-admin";
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);
  private static final int START_ATTEMPTS = 3;

  private final KubeBinaries binaries;
  private final Path dir;
  private final int etcdPort;
  private final int etcdPeerPort;
  private final int port;
  private final List<String> extraFlags;
  private final AtomicInteger namespaces = new AtomicInteger();
  private final List<KubernetesClient> clients = new ArrayList<>();
  private Process etcd;
  private Process apiServer;
  private KubernetesClient admin;

  private RealApiServer(KubeBinaries binaries, Path dir, List<String> extraFlags)
      throws IOException {
    this.binaries = binaries;
    this.dir = dir;
    this.extraFlags = List.copyOf(extraFlags);
    int[] ports = FreePorts.take(3);
    this.etcdPort = ports[0];
    this.etcdPeerPort = ports[1];
    this.port = ports[2];
  }

  /**
   * Starts etcd and the API server under {@code dir} and waits until the API server is ready. A
   * port found free may be taken before etcd or the API server binds it (by any connection's local
   * port): then both start again on other ports, in {@code dir/attempt-<n>}.
   */
  public static RealApiServer start(KubeBinaries binaries, Path dir, List<String> extraFlags)
      throws IOException {
    for (int attempt = 1; ; attempt++) {
      Path attemptDir = attempt == 1 ? dir : dir.resolve("attempt-" + attempt);
      try {
        return startOnce(binaries, attemptDir, extraFlags);
      } catch (IOException e) {
        if (attempt >= START_ATTEMPTS || !portTaken(attemptDir)) {
          throw e;
        }
        LOG.warn(
            "{}: a port was taken before it was bound; starting on other ports", e.getMessage());
      }
    }
  }

  private static boolean portTaken(Path dir) {
    for (String log : List.of("apiserver.log", "etcd.log")) {
      try {
        Path file = dir.resolve(log);
        if (Files.exists(file) && Files.readString(file).contains("address already in use")) {
          return true;
        }
      } catch (IOException e) {
        // unreadable: not known to be a port clash
      }
    }
    return false;
  }

  private static RealApiServer startOnce(KubeBinaries binaries, Path dir, List<String> extraFlags)
      throws IOException {
    Files.createDirectories(dir);
    RealApiServer server = new RealApiServer(binaries, dir, extraFlags);
    boolean ok = false;
    try {
      server.startEtcd();
      server.writeKeys();
      server.startApiServer();
      server.admin = server.client(server.adminConfig());
      ok = true;
      return server;
    } finally {
      if (!ok) {
        server.close();
      }
    }
  }

  /** The API server's URL ({@code https://127.0.0.1:<port>}). */
  public String url() {
    return "https://127.0.0.1:" + port;
  }

  /** The CA that signed the API server's serving certificate (PEM). */
  public Path caFile() {
    return dir.resolve("certs").resolve("apiserver.crt");
  }

  /** The directory holding the servers' state and logs. */
  public Path dir() {
    return dir;
  }

  /** A client with every right (group system:masters). Closed with the server. */
  public KubernetesClient admin() {
    return admin;
  }

  /** The admin's client configuration (for a kubeconfig or another client). */
  public Config adminConfig() {
    return base().withOauthToken(ADMIN_TOKEN).build();
  }

  /**
   * A new namespace {@code <prefix>-<n>} with its {@code default} ServiceAccount (which a cluster's
   * controller-manager would create, and Pods need).
   */
  public String namespace(String prefix) {
    String name = prefix + "-" + namespaces.incrementAndGet();
    admin
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
    serviceAccount(name, "default");
    return name;
  }

  /** Creates the ServiceAccount {@code namespace/name} unless it exists. */
  public void serviceAccount(String namespace, String name) {
    if (admin.serviceAccounts().inNamespace(namespace).withName(name).get() == null) {
      admin
          .serviceAccounts()
          .inNamespace(namespace)
          .resource(
              new ServiceAccountBuilder()
                  .withNewMetadata()
                  .withName(name)
                  .withNamespace(namespace)
                  .endMetadata()
                  .build())
          .create();
    }
  }

  /**
   * The configuration of a client that authenticates as ServiceAccount {@code namespace/name} (with
   * a one-hour token from the TokenRequest API), creating the ServiceAccount if needed.
   */
  public Config serviceAccountConfig(String namespace, String name) {
    serviceAccount(namespace, name);
    TokenRequest request =
        new TokenRequestBuilder().withNewSpec().withExpirationSeconds(3600L).endSpec().build();
    String token =
        admin
            .serviceAccounts()
            .inNamespace(namespace)
            .withName(name)
            .tokenRequest(request)
            .getStatus()
            .getToken();
    return base().withOauthToken(token).withNamespace(namespace).build();
  }

  /** A client as ServiceAccount {@code namespace/name}; closed with the server. */
  public KubernetesClient serviceAccountClient(String namespace, String name) {
    return client(serviceAccountConfig(namespace, name));
  }

  /** A client of {@code config}, closed with the server. */
  public KubernetesClient client(Config config) {
    KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build();
    synchronized (clients) {
      clients.add(client);
    }
    return client;
  }

  /** Writes a kubeconfig for {@code config}'s server, CA and token into {@code file}. */
  public Path kubeconfig(Config config, Path file) throws IOException {
    String yaml =
        "apiVersion: v1\nkind: Config\nclusters:\n- name: real\n  cluster:\n    server: "
            + url()
            + "\n    certificate-authority: "
            + caFile()
            + "\nusers:\n- name: user\n  user:\n    token: "
            + config.getOauthToken()
            + "\ncontexts:\n- name: real\n  context:\n    cluster: real\n    user: user\n"
            + "    namespace: "
            + (config.getNamespace() == null ? "default" : config.getNamespace())
            + "\ncurrent-context: real\n";
    Files.createDirectories(file.toAbsolutePath().getParent());
    Files.writeString(file, yaml);
    return file;
  }

  /**
   * Creates (or replaces) {@code crds} as the admin and waits until each is Established, so their
   * resources can be used at once.
   */
  public void installCrds(Collection<CustomResourceDefinition> crds) {
    var api = admin.apiextensions().v1().customResourceDefinitions();
    for (CustomResourceDefinition crd : crds) {
      api.resource(crd).createOr(c -> c.update());
    }
    for (CustomResourceDefinition crd : crds) {
      api.withName(crd.getMetadata().getName())
          .waitUntilCondition(
              c ->
                  c != null
                      && c.getStatus() != null
                      && c.getStatus().getConditions().stream()
                          .anyMatch(
                              x ->
                                  "Established".equals(x.getType())
                                      && "True".equals(x.getStatus())),
              30,
              TimeUnit.SECONDS);
    }
  }

  /** Creates every object of a multi-document YAML as the admin (or replaces it when it exists). */
  public List<HasMetadata> apply(String yaml) {
    return apply(yaml, UnaryOperator.identity());
  }

  /**
   * Creates (or replaces) every object of a multi-document YAML as the admin, each passed through
   * {@code edit} first (to change a namespace or a subject, say).
   */
  public List<HasMetadata> apply(String yaml, UnaryOperator<HasMetadata> edit) {
    List<HasMetadata> applied = new ArrayList<>();
    for (HasMetadata object :
        admin.load(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8))).items()) {
      if (object == null) {
        continue;
      }
      applied.add(admin.resource(edit.apply(object)).createOr(existing -> existing.update()));
    }
    return applied;
  }

  /** Stops and starts the API server (etcd keeps running): what an API server restart does. */
  public void restart() throws IOException {
    stop(apiServer);
    startApiServer();
  }

  /** Stops the API server (etcd keeps running) until {@link #resume}. */
  public void stopApiServer() {
    stop(apiServer);
  }

  /** Starts the API server again after {@link #stopApiServer}. */
  public void resume() throws IOException {
    startApiServer();
  }

  private ConfigBuilder base() {
    return new ConfigBuilder()
        .withMasterUrl(url())
        .withCaCertFile(caFile().toString())
        .withRequestTimeout(30_000)
        .withConnectionTimeout(10_000);
  }

  private void startEtcd() throws IOException {
    String client = "http://127.0.0.1:" + etcdPort;
    String peer = "http://127.0.0.1:" + etcdPeerPort;
    etcd =
        new ProcessBuilder(
                binaries.etcd().toString(),
                "--data-dir",
                dir.resolve("etcd").toString(),
                "--listen-client-urls",
                client,
                "--advertise-client-urls",
                client,
                "--listen-peer-urls",
                peer,
                "--initial-advertise-peer-urls",
                peer,
                "--initial-cluster",
                "default=" + peer)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("etcd.log").toFile())
            .start();
  }

  private void writeKeys() throws IOException {
    if (Files.exists(dir.resolve("sa.key"))) {
      return;
    }
    KeyPair pair;
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
      generator.initialize(2048);
      pair = generator.generateKeyPair();
    } catch (NoSuchAlgorithmException e) {
      throw new IOException(e);
    }
    Files.writeString(dir.resolve("sa.key"), pem("PRIVATE KEY", pair.getPrivate().getEncoded()));
    Files.writeString(dir.resolve("sa.pub"), pem("PUBLIC KEY", pair.getPublic().getEncoded()));
    Files.writeString(
        dir.resolve("tokens.csv"), ADMIN_TOKEN + ",admin,uid-admin,\"system:masters\"\n");
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }

  private void startApiServer() throws IOException {
    List<String> command = new ArrayList<>();
    command.add(binaries.apiServer().toString());
    command.addAll(
        List.of(
            "--etcd-servers=http://127.0.0.1:" + etcdPort,
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            "--secure-port=" + port,
            "--cert-dir=" + dir.resolve("certs"),
            "--service-cluster-ip-range=10.96.0.0/24",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--service-account-key-file=" + dir.resolve("sa.pub"),
            "--service-account-signing-key-file=" + dir.resolve("sa.key"),
            "--token-auth-file=" + dir.resolve("tokens.csv"),
            "--authorization-mode=RBAC",
            "--allow-privileged=true"));
    command.addAll(extraFlags);
    apiServer =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("apiserver.log").toFile()))
            .start();
    awaitReady();
  }

  private void awaitReady() throws IOException {
    Instant deadline = Instant.now().plus(READY_TIMEOUT);
    String last = "not started";
    while (Instant.now().isBefore(deadline)) {
      if (!apiServer.isAlive()) {
        throw new IOException(
            "kube-apiserver exited with " + apiServer.exitValue() + "; see " + dir);
      }
      if (etcd != null && !etcd.isAlive()) {
        throw new IOException("etcd exited with " + etcd.exitValue() + "; see " + dir);
      }
      if (Files.exists(caFile())) {
        try (KubernetesClient probe =
            new KubernetesClientBuilder()
                .withConfig(
                    base()
                        .withOauthToken(ADMIN_TOKEN)
                        .withRequestTimeout(2_000)
                        .withRequestRetryBackoffLimit(0)
                        .build())
                .build()) {
          String ready = probe.raw(url() + "/readyz");
          if ("ok".equals(ready)
              && probe.namespaces().withName("default").get() != null
              && probe.rbac().clusterRoles().withName("admin").get() != null) {
            LOG.info("kube-apiserver ready on {} (state in {})", url(), dir);
            return;
          }
          last = "readyz: " + ready;
        } catch (KubernetesClientException e) {
          last = e.getMessage();
        }
      }
      try {
        // Polls a process that gives no event to wait on; bounded by the deadline above.
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while waiting for kube-apiserver", e);
      }
    }
    throw new IOException(
        "kube-apiserver not ready after " + READY_TIMEOUT + " (" + last + "); see " + dir);
  }

  private static void stop(Process process) {
    if (process == null || !process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    synchronized (clients) {
      clients.forEach(KubernetesClient::close);
      clients.clear();
    }
    if (admin != null) {
      admin.close();
    }
    stop(apiServer);
    stop(etcd);
  }
}
