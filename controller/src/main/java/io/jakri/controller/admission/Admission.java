package io.jakri.controller.admission;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.jakri.agent.Safeguards;
import io.jakri.agent.validate.ConfigurationReview;
import io.jakri.controller.objects.KindDiscovery;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The admission webhook's parts, wired: validate's review of a Configuration, the HTTPS server
 * answering the API server with it, and (with a certificate of the controller's own CA and a
 * webhook configuration named) the keeper of that configuration's caBundle.
 */
public record Admission(
    ConfigurationReview review, AdmissionServer server, Optional<CaBundlePatcher> caBundle)
    implements AutoCloseable {

  /** How often the caBundle is checked again once set (a test shortens it). */
  static final Duration RECHECK =
      Duration.ofSeconds(Long.getLong("jakri.controller.webhookRecheckSeconds", 60));

  /** How long a handler's check of discoveryDetails may take: within the webhook's 10 s. */
  static final Duration HANDLER_TIMEOUT = Duration.ofSeconds(5);

  public static Admission start(
      int port,
      WebhookTls tls,
      Path pluginsDir,
      KubernetesClient client,
      String webhookConfiguration,
      KindDiscovery instanceObjectKinds,
      ScheduledExecutorService scheduler) {
    ObjectKindWarnings kindWarnings = new ObjectKindWarnings(instanceObjectKinds);
    ConfigurationReview review =
        new ConfigurationReview(pluginsDir, Safeguards.DEFAULT_CLASS_DOMAINS, HANDLER_TIMEOUT);
    AdmissionServer server;
    try {
      server =
          new AdmissionServer(
              new InetSocketAddress(port),
              tls,
              (where, object) -> {
                ConfigurationReview.Verdict v = review.review(where, object);
                List<String> warnings = new ArrayList<>(v.warnings());
                warnings.addAll(kindWarnings.of(where, object));
                return new AdmissionServer.Verdict(v.problems(), warnings);
              });
    } catch (IOException e) {
      review.close();
      throw new UncheckedIOException("cannot serve the admission webhook on port " + port, e);
    }
    server.start();
    Optional<CaBundlePatcher> patcher = Optional.empty();
    if (!tls.caPem().isEmpty() && webhookConfiguration != null && !webhookConfiguration.isBlank()) {
      patcher =
          Optional.of(
              new CaBundlePatcher(
                  client,
                  webhookConfiguration.strip(),
                  tls.caPem(),
                  scheduler,
                  Duration.ofSeconds(2),
                  RECHECK));
      patcher.get().start();
    }
    return new Admission(review, server, patcher);
  }

  @Override
  public void close() {
    caBundle.ifPresent(CaBundlePatcher::close);
    server.close();
    review.close();
  }
}
