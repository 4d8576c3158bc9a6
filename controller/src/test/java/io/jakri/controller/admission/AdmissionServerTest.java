package io.jakri.controller.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The webhook's HTTPS answers to AdmissionReviews, good and hostile, with a client that trusts only
 * the CA the server was given (as the API server trusts the caBundle).
 */
class AdmissionServerTest {

  final ObjectMapper json = new ObjectMapper();
  final List<Object> reviewed = new ArrayList<>();
  WebhookTls tls;
  AdmissionServer server;
  HttpClient client;

  @BeforeEach
  void start() throws Exception {
    tls = WebhookTls.generate(List.of("127.0.0.1", "localhost"));
    server =
        new AdmissionServer(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
            tls,
            (where, object) -> {
              synchronized (reviewed) {
                reviewed.add(object);
              }
              Map<?, ?> spec = (Map<?, ?>) ((Map<?, ?>) object).get("spec");
              return spec != null && spec.containsKey("bad")
                  ? new AdmissionServer.Verdict(
                      List.of(where + ": first", where + ": second"), List.of(where + ": careful"))
                  : new AdmissionServer.Verdict(List.of(), List.of());
            });
    server.start();
    client = HttpClient.newBuilder().sslContext(trusting(tls.caPem())).build();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  static SSLContext trusting(String caPem) throws Exception {
    X509Certificate ca =
        (X509Certificate)
            CertificateFactory.getInstance("X.509")
                .generateCertificate(
                    new java.io.ByteArrayInputStream(caPem.getBytes(StandardCharsets.US_ASCII)));
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", ca);
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, tmf.getTrustManagers(), null);
    return context;
  }

  HttpResponse<String> post(String body) throws Exception {
    return client.send(
        HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + server.port() + "/validate"))
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static String review(String operation, String kind, String object) {
    return """
        {"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{
         "uid":"u-1","operation":"%s","namespace":"team-a",
         "kind":{"group":"akri.sh","version":"v0","kind":"%s"},
         "object":%s}}"""
        .formatted(operation, kind, object);
  }

  @Test
  void anInvalidConfigurationIsRefusedWithEveryProblemAndItsWarnings() throws Exception {
    HttpResponse<String> r =
        post(
            review(
                "CREATE",
                "Configuration",
                "{\"metadata\":{\"name\":\"cam\"},\"spec\":{\"bad\":1}}"));
    assertThat(r.statusCode()).isEqualTo(200);
    JsonNode answer = json.readTree(r.body());
    assertThat(answer.path("kind").asText()).isEqualTo("AdmissionReview");
    assertThat(answer.path("apiVersion").asText()).isEqualTo("admission.k8s.io/v1");
    JsonNode response = answer.path("response");
    assertThat(response.path("uid").asText()).isEqualTo("u-1");
    assertThat(response.path("allowed").asBoolean(true)).isFalse();
    assertThat(response.path("status").path("code").asInt()).isEqualTo(422);
    assertThat(response.path("status").path("message").asText())
        .isEqualTo(
            "2 problems:\n- configuration team-a/cam: first\n- configuration team-a/cam: second");
    assertThat(response.path("warnings").get(0).asText())
        .isEqualTo("configuration team-a/cam: careful");
  }

  @Test
  void aValidConfigurationIsAllowedWithoutStatus() throws Exception {
    JsonNode response =
        json.readTree(
                post(review(
                        "UPDATE", "Configuration", "{\"metadata\":{\"name\":\"cam\"},\"spec\":{}}"))
                    .body())
            .path("response");
    assertThat(response.path("allowed").asBoolean(false)).isTrue();
    assertThat(response.has("status")).isFalse();
    assertThat(response.has("warnings")).isFalse();
  }

  @Test
  void deletesAndOtherKindsAreAllowedUnreviewed() throws Exception {
    assertThat(
            json.readTree(post(review("DELETE", "Configuration", "null")).body())
                .path("response")
                .path("allowed")
                .asBoolean(false))
        .isTrue();
    assertThat(
            json.readTree(post(review("CREATE", "Instance", "{\"spec\":{\"bad\":1}}")).body())
                .path("response")
                .path("allowed")
                .asBoolean(false))
        .isTrue();
    assertThat(reviewed).isEmpty();
  }

  @Test
  void hostileRequestsGetAClearStatusAndTheServerKeepsAnswering() throws Exception {
    assertThat(post("not json").statusCode()).isEqualTo(400);
    assertThat(post("{\"request\":{}}").statusCode()).isEqualTo(400);
    assertThat(post("[1,2]").statusCode()).isEqualTo(400);
    assertThat(post("x".repeat(AdmissionServer.MAX_BODY + 10)).statusCode()).isEqualTo(413);
    HttpResponse<String> get =
        client.send(
            HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + server.port() + "/validate"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(get.statusCode()).isEqualTo(405);
    assertThat(post(review("CREATE", "Configuration", "{\"spec\":{}}")).statusCode())
        .isEqualTo(200);
  }

  @Test
  void aClientTrustingAnotherCaIsRefusedTheHandshake() throws Exception {
    HttpClient other =
        HttpClient.newBuilder()
            .sslContext(trusting(WebhookTls.generate(List.of("127.0.0.1")).caPem()))
            .build();
    assertThatThrownBy(
            () ->
                other.send(
                    HttpRequest.newBuilder(
                            URI.create("https://127.0.0.1:" + server.port() + "/validate"))
                        .POST(HttpRequest.BodyPublishers.ofString("{}"))
                        .build(),
                    HttpResponse.BodyHandlers.ofString()))
        .isInstanceOf(SSLHandshakeException.class);
  }

  @Test
  void aCertificateReadFromPemFilesIsServed(@TempDir Path dir) throws Exception {
    openssl(dir, "127.0.0.1");
    WebhookTls read = WebhookTls.read(dir.resolve("tls.crt"), dir.resolve("tls.key"));
    assertThat(read.caPem()).isEmpty();
    try (AdmissionServer fromFiles =
        new AdmissionServer(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
            read,
            (w, o) -> new AdmissionServer.Verdict(List.of(), List.of()))) {
      fromFiles.start();
      assertThat(status(fromFiles, Files.readString(dir.resolve("tls.crt")))).isEqualTo(200);
    }
  }

  static void openssl(Path dir, String cn) throws Exception {
    Process openssl =
        new ProcessBuilder(
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=" + cn,
                "-addext",
                "subjectAltName=IP:127.0.0.1",
                "-keyout",
                dir.resolve("new.key").toString(),
                "-out",
                dir.resolve("new.crt").toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("openssl.log").toFile())
            .start();
    assertThat(openssl.waitFor()).as(Files.readString(dir.resolve("openssl.log"))).isZero();
    // As the kubelet swaps a Secret's files: each appears whole, under its final name.
    Files.move(
        dir.resolve("new.key"),
        dir.resolve("tls.key"),
        java.nio.file.StandardCopyOption.REPLACE_EXISTING,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    Files.move(
        dir.resolve("new.crt"),
        dir.resolve("tls.crt"),
        java.nio.file.StandardCopyOption.REPLACE_EXISTING,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  @Test
  void aRenewedCertificateIsServedWithoutARestart(@TempDir Path dir) throws Exception {
    openssl(dir, "first");
    WebhookTls tls = WebhookTls.read(dir.resolve("tls.crt"), dir.resolve("tls.key"));
    try (AdmissionServer renewing =
        new AdmissionServer(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
            tls.sslContext(java.time.Duration.ZERO),
            (w, o) -> new AdmissionServer.Verdict(List.of(), List.of()))) {
      renewing.start();
      String first = Files.readString(dir.resolve("tls.crt"));
      assertThat(status(renewing, first)).isEqualTo(200);
      openssl(dir, "second");
      // The file times may not change within the clock's resolution: make the change visible.
      Files.setLastModifiedTime(
          dir.resolve("tls.crt"),
          java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 5_000));
      String second = Files.readString(dir.resolve("tls.crt"));
      assertThat(second).isNotEqualTo(first);
      assertThat(status(renewing, second)).isEqualTo(200);
      assertThatThrownBy(() -> status(renewing, first)).isInstanceOf(SSLHandshakeException.class);
      // A broken renewal keeps the last good pair.
      Files.writeString(dir.resolve("tls.crt"), "half written");
      Files.setLastModifiedTime(
          dir.resolve("tls.crt"),
          java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 10_000));
      assertThat(status(renewing, second)).isEqualTo(200);
    }
  }

  /** The status of a POST to {@code server} by a client trusting only {@code certPem}. */
  static int status(AdmissionServer server, String certPem) throws Exception {
    HttpClient trustingIt = HttpClient.newBuilder().sslContext(trusting(certPem)).build();
    return trustingIt
        .send(
            HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + server.port() + "/validate"))
                .POST(HttpRequest.BodyPublishers.ofString(review("CREATE", "Configuration", "{}")))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .statusCode();
  }

  @Test
  void unreadablePemFilesAreOneLineNamingTheFile(@TempDir Path dir) throws IOException {
    Files.writeString(dir.resolve("tls.crt"), "not a certificate");
    Files.writeString(dir.resolve("tls.key"), "not a key");
    assertThatThrownBy(() -> WebhookTls.read(dir.resolve("tls.crt"), dir.resolve("tls.key")))
        .isInstanceOf(IOException.class)
        .hasMessage(dir.resolve("tls.crt") + ": no PEM certificate in it");
  }
}
