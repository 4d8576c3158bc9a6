package io.jakri.agent.configuration;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class EmbeddedSpecsTest {

  private final ConfigurationParser parser = new ConfigurationParser(true);

  private static String configuration(String name, String specTail) {
    return """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: %s
        spec:
          discoveryHandler:
            name: debugEcho
            discoveryDetails: "descriptions: [foo]"
        %s"""
        .formatted(name, specTail.indent(2));
  }

  @Test
  void everyProblemOfOneFileIsReportedInOnePass() throws IOException {
    String text;
    try (InputStream in = getClass().getResourceAsStream("/validate/every-problem.yaml")) {
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    ConfigurationParser.Result result = parser.parse("every-problem.yaml", text);
    assertThat(result.configurations()).isEmpty();
    assertThat(result.errors())
        .containsExactlyInAnyOrder(
            "every-problem.yaml: metadata.name \"a.b\" must be a DNS-1123 label: lower-case"
                + " letters, digits and '-' (no '.'), starting and ending with a letter or digit",
            "every-problem.yaml: spec.brokerProperties.PORT must be a string but is 8080 (quote"
                + " it: \"8080\")",
            "every-problem.yaml: spec.brokerSpec.brokerPodSpec.containers[0].imagePullPolcy:"
                + " unknown field",
            "every-problem.yaml: spec.instanceServiceSpec.ports[0].port must be an integer but is"
                + " \"eighty\"");
  }

  @Test
  void theAgentsParserServesTheDevicesAndWarnsOfWhatOnlyTheControllerUses() {
    ConfigurationParser.Result result =
        new ConfigurationParser()
            .parse(
                "c.yaml",
                configuration(
                    "lenient",
                    "brokerProperties: {PORT: 8080}\nbrokerSpec:\n  brokerPodSpec: {hostNetwork: true}"));
    assertThat(result.errors()).isEmpty();
    assertThat(result.configurations().get(0).brokerProperties()).containsEntry("PORT", "8080");
    assertThat(result.warnings())
        .containsExactly(
            "c.yaml: spec.brokerSpec.brokerPodSpec.containers is required: a Pod runs at least"
                + " one container (the controller's broker or Service will fail)");
  }

  @Test
  void aDocumentInvalidForOtherReasonsStillNamesItsHandlerForItsCheck() {
    ConfigurationParser.Result result =
        parser.parse("c.yaml", configuration("Bad_Name", "capacity: 0"));
    assertThat(result.errors()).hasSize(2);
    assertThat(result.handlersOfInvalid())
        .containsExactly(
            new ConfigurationParser.HandlerOfInvalid(
                "c.yaml", "Bad_Name", "debugEcho", "descriptions: [foo]"));
  }

  @Test
  void aPodWithoutContainersIsRefused() {
    ConfigurationParser.Result result =
        parser.parse(
            "c.yaml",
            configuration("no-containers", "brokerSpec:\n  brokerPodSpec:\n    hostNetwork: true"));
    assertThat(result.errors())
        .containsExactly(
            "c.yaml: spec.brokerSpec.brokerPodSpec.containers is required: a Pod runs at least"
                + " one container");
  }

  @Test
  void aJobWithoutItsPodTemplateIsRefused() {
    ConfigurationParser.Result result =
        parser.parse(
            "c.yaml",
            configuration(
                "job", "brokerSpec:\n  brokerJobSpec:\n    parallelism: 2\n    backofLimit: 1"));
    assertThat(result.errors())
        .containsExactlyInAnyOrder(
            "c.yaml: spec.brokerSpec.brokerJobSpec.backofLimit: unknown field",
            "c.yaml: spec.brokerSpec.brokerJobSpec.template.spec is required (the Pod each Job"
                + " runs)");
  }

  @Test
  void akrisInvalidWebhookFixtureIsRefusedForEachOfItsProblems() {
    ConfigurationParser.Result result =
        parser.parse(
            "akri.yaml",
            configuration(
                "broker",
                """
                brokerSpec:
                  brokerPodSpec:
                    xUnknownSyntheticField: this_field_does_not_exist
                    containers:
                      - name: test-broker
                        image: "nginx:stable-alpine"
                        imagePullPolicy: Always
                instanceServiceSpec:
                  type: ClusterIP
                  ports:
                    - name: name
                      port: 0
                      targetPort: 0
                      protocol: TCP"""));
    assertThat(result.errors())
        .containsExactlyInAnyOrder(
            "akri.yaml: spec.brokerSpec.brokerPodSpec.xUnknownSyntheticField: unknown field",
            "akri.yaml: spec.instanceServiceSpec.ports[0].port must be 1 to 65535 but is 0");
  }

  @Test
  void aFullBrokerSpecOfTheKubernetesApiIsAccepted() {
    ConfigurationParser.Result result =
        parser.parse(
            "c.yaml",
            configuration(
                "full",
                """
                brokerProperties:
                  PORT: "8080"
                  EMPTY:
                brokerSpec:
                  brokerPodSpec:
                    nodeSelector: {kubernetes.io/os: linux}
                    enableServiceLinks: false
                    terminationGracePeriodSeconds: 30
                    securityContext: {runAsNonRoot: true, runAsUser: 65532}
                    containers:
                      - name: broker
                        image: jakri/broker-template:0.1.0
                        args: ["--port", "8080"]
                        env:
                          - {name: MODE, value: "fast"}
                          - name: NODE
                            valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
                        ports: [{containerPort: 8080, name: http}]
                        resources:
                          limits: {cpu: 100m, memory: 64Mi, "{{PLACEHOLDER}}": "1"}
                          requests: {cpu: 0.1}
                        readinessProbe:
                          httpGet: {path: /healthz, port: http}
                        livenessProbe:
                          httpGet: {path: /healthz, port: 8080}
                        volumeMounts: [{name: data, mountPath: /data, readOnly: true}]
                    volumes:
                      - name: data
                        emptyDir: {sizeLimit: 1Gi}
                instanceServiceSpec:
                  type: ClusterIP
                  ports: [{name: http, port: 80, targetPort: http, protocol: TCP}]
                configurationServiceSpec:
                  clusterIP: None
                  ports: [{port: 80, targetPort: 8080}]"""));
    assertThat(result.errors()).isEmpty();
    assertThat(result.configurations()).hasSize(1);
  }

  @Test
  void wrongShapesNameTheirFieldAndWhatToDo() {
    ConfigurationParser.Result result =
        parser.parse(
            "c.yaml",
            configuration(
                "shapes",
                """
                brokerSpec:
                  brokerPodSpec:
                    hostNetwork: "yes"
                    containers:
                      - name: b
                        image: i
                        env: [{name: PORT, value: 8080}]
                        args: run
                        ports: [{containerPort: 70000}]"""));
    assertThat(result.errors())
        .containsExactlyInAnyOrder(
            "c.yaml: spec.brokerSpec.brokerPodSpec.hostNetwork must be true or false but is"
                + " \"yes\"",
            "c.yaml: spec.brokerSpec.brokerPodSpec.containers[0].env[0].value must be a string"
                + " but is 8080 (quote it: \"8080\")",
            "c.yaml: spec.brokerSpec.brokerPodSpec.containers[0].args must be a list but is"
                + " \"run\"");
  }
}
