package io.jakri.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfigurationBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.jakri.agent.validate.Validator;
import io.jakri.testing.kube.FreePorts;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The controller's admission webhook on the real API server (issue 27 item 4): the packaged
 * controller, as ServiceAccount akri/jakri-controller with only controller-rbac.yaml's rights,
 * serves HTTPS on loopback; the API server calls it back for Configurations created or updated in
 * one namespace (a namespaceSelector keeps the rest of the shared server out of it) and trusts it
 * through the caBundle the controller sets. A second namespace is not selected: there the CRD alone
 * decides, so each case shows what the CRD, validate and the webhook say.
 */
@ExtendWith(RealKube.class)
class AdmissionWebhookIT {

  static final String WEBHOOK = "jakri-webhook";
  static final Path PLUGINS =
      Path.of("..", "agent", "target", "plugins").toAbsolutePath().normalize();
  static final Path CASES = Path.of("src", "test", "resources", "admission").toAbsolutePath();
  static final String DENIED = "admission webhook \"validate.akri.sh\" denied the request: ";

  @TempDir static Path tmp;
  static RealCluster cluster;
  static KubernetesClient admin;
  static String crdOnly;
  static Process controller;

  @BeforeAll
  static void start(RealApiServer api) throws Exception {
    assertThat(PLUGINS.resolve("jakri-handler-simulated.jar"))
        .as("the agent module's packaged handler plugins (built before this module)")
        .isRegularFile();
    cluster = new RealCluster(api, "admission");
    // The controller watches the configmaps it may create: the RBAC the chart would generate.
    api.apply(InstanceObjectsIT.OBJECTS_RBAC);
    admin = cluster.client;
    crdOnly = cluster.namespace("crd-only");
    int port = FreePorts.one();
    admin
        .admissionRegistration()
        .v1()
        .validatingWebhookConfigurations()
        .resource(webhookConfiguration(port, cluster.ns))
        .createOr(e -> e.update());
    controller =
        ControllerJar.start(
            cluster.kubeconfig(tmp.resolve("kubeconfig")),
            tmp.resolve("out"),
            tmp.resolve("out"),
            List.of("-Djakri.controller.webhookRecheckSeconds=2"),
            "--namespace",
            cluster.ns,
            "--webhook-port",
            String.valueOf(port),
            "--webhook-names",
            "127.0.0.1,localhost",
            "--webhook-configuration",
            WEBHOOK,
            "--plugins-dir",
            PLUGINS.toString(),
            "--instance-object-resources",
            "configmaps");
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              assertThat(controller.isAlive()).as(out()).isTrue();
              assertThat(caBundle()).isNotEmpty();
              assertThat(out()).contains("admission webhook on port " + port);
            });
    // The API server trusts the webhook once it has read the caBundle: a valid Configuration goes
    // through the webhook (failurePolicy Fail here, so a call that fails would refuse it).
    await()
        .atMost(Duration.ofSeconds(60))
        .ignoreExceptions()
        .untilAsserted(
            () -> {
              create(cluster.ns, "valid.yaml");
              delete(cluster.ns, "broker");
            });
  }

  @AfterAll
  static void stop() throws Exception {
    if (admin != null) {
      admin
          .admissionRegistration()
          .v1()
          .validatingWebhookConfigurations()
          .withName(WEBHOOK)
          .delete();
    }
    if (controller != null) {
      controller.destroy();
      assertThat(controller.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(controller.exitValue()).as(out()).isZero();
      assertThat(out()).as("no stack trace").doesNotContain("\tat ").doesNotContain("Forbidden");
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void akrisInvalidConfigurationIsRefusedWithEachOfItsProblemsInOneAnswer() {
    assertThatThrownBy(() -> create(cluster.ns, "akri-invalid.yaml"))
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining(DENIED + "2 problems:")
        .hasMessageContaining(
            "- configuration "
                + cluster.ns
                + "/broker: spec.brokerSpec.brokerPodSpec.notAPodSpecField: unknown field")
        .hasMessageContaining(
            "- configuration "
                + cluster.ns
                + "/broker: spec.instanceServiceSpec.ports[0].port must be 1 to 65535 but is 0")
        .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(422));
    assertThat(get(cluster.ns, "broker")).isNull();
  }

  /**
   * As a user meets it: {@code kubectl apply} (Debian's kubectl; .ci/run installs it) of Akri's
   * invalid Configuration, refused with both problems, and of a valid one, created.
   */
  /** Debian's kubectl on PATH; the test fails without it under CI=true, else is skipped. */
  static Path kubectl() {
    Path kubectl = onPath("kubectl");
    if (kubectl == null) {
      assertThat(System.getenv("CI"))
          .as(
              "CI=true and kubectl is not on PATH (Debian's kubernetes-client; .ci/run unpacks it and puts it first on PATH)")
          .isNotEqualTo("true");
      org.junit.jupiter.api.Assumptions.abort("kubectl is not on PATH");
    }
    return kubectl;
  }

  /**
   * A template of a kind the controller may not create (it allows configmaps here) is accepted,
   * with a warning kubectl prints at apply time, before the status would say it.
   */
  @Test
  void kubectlApplyWarnsOfAnInstanceObjectKindTheControllerMayNotCreate(RealApiServer api)
      throws Exception {
    Path kubectl = kubectl();
    Path kubeconfig = api.kubeconfig(api.adminConfig(), tmp.resolve("admin-kubeconfig"));
    Path file = tmp.resolve("secret-object.yaml");
    Files.writeString(
        file,
        """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: objects
        spec:
          discoveryHandler:
            name: simulated
          instanceObjects:
            - apiVersion: v1
              kind: ConfigMap
              data: {instance: "{{INSTANCE_NAME}}"}
            - apiVersion: v1
              kind: Secret
              stringData: {instance: "{{INSTANCE_NAME}}"}
        """);
    Result applied = run(kubectl, kubeconfig, "apply", "-n", cluster.ns, "-f", file.toString());
    System.out.println("kubectl apply -f secret-object.yaml:\n" + applied.output());
    try {
      assertThat(applied.exit()).as(applied.output()).isZero();
      assertThat(applied.output())
          .contains("configuration.akri.sh/objects created")
          .contains(
              "Warning: configuration "
                  + cluster.ns
                  + "/objects: spec.instanceObjects[1]: Secret (v1) is not among the kinds the"
                  + " controller may create (--instance-object-resources: configmaps); it will not"
                  + " be created, and the Configuration's status will say so")
          .doesNotContain("instanceObjects[0]")
          .doesNotContain("unknown field");
    } finally {
      delete(cluster.ns, "objects");
    }
  }

  @Test
  void kubectlApplyRefusesItWithEveryProblem(RealApiServer api) throws Exception {
    Path kubectl = kubectl();
    Path kubeconfig = api.kubeconfig(api.adminConfig(), tmp.resolve("admin-kubeconfig"));
    Result refused =
        run(
            kubectl,
            kubeconfig,
            "apply",
            "-n",
            cluster.ns,
            "-f",
            CASES.resolve("akri-invalid.yaml").toString());
    System.out.println("kubectl apply -f akri-invalid.yaml:\n" + refused.output());
    assertThat(refused.exit()).as(refused.output()).isNotZero();
    assertThat(refused.output())
        .contains("denied the request: 2 problems:")
        .contains("spec.brokerSpec.brokerPodSpec.notAPodSpecField: unknown field")
        .contains("spec.instanceServiceSpec.ports[0].port must be 1 to 65535 but is 0");
    Result created =
        run(
            kubectl,
            kubeconfig,
            "apply",
            "-n",
            cluster.ns,
            "-f",
            CASES.resolve("valid.yaml").toString());
    assertThat(created.exit()).as(created.output()).isZero();
    assertThat(created.output()).contains("configuration.akri.sh/broker created");
    delete(cluster.ns, "broker");
  }

  record Result(int exit, String output) {}

  static Result run(Path kubectl, Path kubeconfig, String... args) throws Exception {
    List<String> command =
        new ArrayList<>(List.of(kubectl.toString(), "--kubeconfig", kubeconfig.toString()));
    command.addAll(List.of(args));
    Path log = Files.createTempFile(tmp, "kubectl", ".log");
    Process p =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("kubectl finished").isTrue();
    return new Result(p.exitValue(), Files.readString(log));
  }

  static Path onPath(String name) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      Path candidate = Path.of(dir, name);
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    return null;
  }

  @Test
  void theHandlersOwnCheckOfDiscoveryDetailsRuns() {
    assertThatThrownBy(() -> create(cluster.ns, "bad-details.yaml"))
        .hasMessageContaining(
            DENIED
                + "configuration "
                + cluster.ns
                + "/details: spec.discoveryHandler.discoveryDetails: descriptions must be a list"
                + " but is integer 7");
  }

  @Test
  void anUpdateIsCheckedLikeACreate() throws Exception {
    create(cluster.ns, "valid.yaml");
    try {
      assertThatThrownBy(
              () ->
                  configurations(cluster.ns)
                      .withName("broker")
                      .patch(
                          PatchContext.of(PatchType.JSON_MERGE),
                          "{\"spec\":{\"instanceServiceSpec\":{\"ports\":[{\"port\":\"eighty\"}]}}}"))
          .hasMessageContaining(
              DENIED
                  + "configuration "
                  + cluster.ns
                  + "/broker: spec.instanceServiceSpec.ports[0].port must be an integer but is"
                  + " \"eighty\"");
    } finally {
      delete(cluster.ns, "broker");
    }
  }

  @Test
  void aResetCaBundleIsPutBack() throws Exception {
    String ours = caBundle();
    admin
        .admissionRegistration()
        .v1()
        .validatingWebhookConfigurations()
        .withName(WEBHOOK)
        .patch(
            PatchContext.of(PatchType.JSON),
            "[{\"op\":\"remove\",\"path\":\"/webhooks/0/clientConfig/caBundle\"}]");
    assertThat(caBundle()).isEmpty();
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(caBundle()).isEqualTo(ours));
  }

  /**
   * Every case: validate (offline, the same plugins), the API server with the webhook, and the API
   * server with the CRD alone. validate and the webhook agree on each; whatever the CRD refuses,
   * both refuse too; what only they refuse is what the CRD keeps opaque (the embedded Kubernetes
   * objects, which CEL cannot see into).
   */
  @Test
  void validateTheWebhookAndTheCrdAgreeOnEveryCase() throws Exception {
    List<String> table = new ArrayList<>();
    List<String> crdOnlyAccepts = new ArrayList<>();
    try (var files = Files.list(CASES)) {
      for (Path file : files.sorted().toList()) {
        String name = file.getFileName().toString();
        boolean validateRefuses = validateRefuses(file);
        boolean webhookRefuses = refused(cluster.ns, name);
        boolean crdRefuses = refused(crdOnly, name);
        table.add(
            "%-28s validate=%s api+webhook=%s crd-alone=%s"
                .formatted(
                    name, verdict(validateRefuses), verdict(webhookRefuses), verdict(crdRefuses)));
        assertThat(webhookRefuses)
            .as(name + ": the webhook agrees with validate")
            .isEqualTo(validateRefuses);
        if (crdRefuses) {
          assertThat(validateRefuses)
              .as(name + ": what the CRD refuses, validate refuses")
              .isTrue();
        } else if (validateRefuses) {
          crdOnlyAccepts.add(name);
        }
      }
    }
    System.out.println("admission cases:\n" + String.join("\n", table));
    assertThat(table).hasSize(11);
    assertThat(crdOnlyAccepts)
        .as("refused only by validate and the webhook: problems inside the embedded objects")
        .containsExactlyInAnyOrder(
            "akri-invalid.yaml",
            "bad-details.yaml",
            "no-containers.yaml",
            "objects-placeholder.yaml",
            "port-eighty.yaml",
            "unknown-container-field.yaml");
  }

  private static boolean validateRefuses(Path file) {
    StringWriter ignored = new StringWriter();
    return new Validator(PLUGINS, new PrintWriter(ignored), new PrintWriter(ignored))
            .validate(List.of(file))
        != 0;
  }

  /** Creates {@code file} in {@code ns}: true when refused, false when created (then deleted). */
  private static boolean refused(String ns, String file) throws IOException {
    try {
      GenericKubernetesResource created = create(ns, file);
      delete(ns, created.getMetadata().getName());
      return false;
    } catch (KubernetesClientException e) {
      assertThat(e.getCode()).as(e.getMessage()).isIn(400, 422);
      return true;
    }
  }

  private static String verdict(boolean refused) {
    return refused ? "refused" : "accepted";
  }

  static GenericKubernetesResource create(String ns, String file) throws IOException {
    GenericKubernetesResource resource =
        Serialization.unmarshal(
            Files.readString(CASES.resolve(file)), GenericKubernetesResource.class);
    return configurations(ns).resource(resource).create();
  }

  static io.fabric8.kubernetes.client.dsl.NonNamespaceOperation<
          GenericKubernetesResource,
          io.fabric8.kubernetes.api.model.GenericKubernetesResourceList,
          io.fabric8.kubernetes.client.dsl.Resource<GenericKubernetesResource>>
      configurations(String ns) {
    return admin.genericKubernetesResources("akri.sh/v0", "Configuration").inNamespace(ns);
  }

  static GenericKubernetesResource get(String ns, String name) {
    return configurations(ns).withName(name).get();
  }

  static void delete(String ns, String name) {
    configurations(ns).withName(name).delete();
    await().atMost(Duration.ofSeconds(30)).until(() -> get(ns, name) == null);
  }

  static String caBundle() {
    ValidatingWebhookConfiguration c =
        admin
            .admissionRegistration()
            .v1()
            .validatingWebhookConfigurations()
            .withName(WEBHOOK)
            .get();
    String b = c.getWebhooks().get(0).getClientConfig().getCaBundle();
    return b == null ? "" : b;
  }

  static ValidatingWebhookConfiguration webhookConfiguration(int port, String ns) {
    return new ValidatingWebhookConfigurationBuilder()
        .withNewMetadata()
        .withName(WEBHOOK)
        .endMetadata()
        .addNewWebhook()
        .withName("validate.akri.sh")
        .withNewClientConfig()
        .withUrl("https://127.0.0.1:" + port + "/validate")
        .endClientConfig()
        .withNewNamespaceSelector()
        .withMatchLabels(Map.of("kubernetes.io/metadata.name", ns))
        .endNamespaceSelector()
        .addNewRule()
        .withApiGroups("akri.sh")
        .withApiVersions("v0")
        .withResources("configurations")
        .withOperations("CREATE", "UPDATE")
        .withScope("Namespaced")
        .endRule()
        .withFailurePolicy("Fail")
        .withSideEffects("None")
        .withAdmissionReviewVersions("v1")
        .withTimeoutSeconds(10)
        .endWebhook()
        .build();
  }

  static String out() throws IOException {
    return Files.readString(tmp.resolve("out"));
  }
}
