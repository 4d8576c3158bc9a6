package io.jakri.controller.admission;

import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.jakri.logging.ApiFailure;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the {@code caBundle} of every webhook in one ValidatingWebhookConfiguration equal to the CA
 * this controller made at start, so the API server trusts the webhook's certificate: checked at
 * once, then again every {@code recheck} (a {@code helm upgrade} or a hand edit may reset it), and
 * every {@code retry} while the configuration is missing or the patch fails (one WARN per new
 * reason). Needs {@code get} and {@code patch} on that one object.
 */
public final class CaBundlePatcher implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(CaBundlePatcher.class);

  private final KubernetesClient client;
  private final String name;
  private final String caBundle;
  private final ScheduledExecutorService scheduler;
  private final Duration retry;
  private final Duration recheck;
  private volatile ScheduledFuture<?> next;
  private volatile boolean closed;
  private String lastFailure = "";

  public CaBundlePatcher(
      KubernetesClient client,
      String name,
      String caPem,
      ScheduledExecutorService scheduler,
      Duration retry,
      Duration recheck) {
    this.client = client;
    this.name = name;
    this.caBundle = Base64.getEncoder().encodeToString(caPem.getBytes(StandardCharsets.US_ASCII));
    this.scheduler = scheduler;
    this.retry = retry;
    this.recheck = recheck;
  }

  /** Starts checking (at once, on the scheduler). */
  public void start() {
    next = scheduler.schedule(this::check, 0, TimeUnit.MILLISECONDS);
  }

  private synchronized void check() {
    if (closed) {
      return;
    }
    Duration delay = recheck;
    try {
      ValidatingWebhookConfiguration current =
          client
              .admissionRegistration()
              .v1()
              .validatingWebhookConfigurations()
              .withName(name)
              .get();
      if (current == null) {
        failed(
            "ValidatingWebhookConfiguration "
                + name
                + " does not exist (yet); the API server does not call the webhook");
        delay = retry;
      } else {
        List<String> ops = new ArrayList<>();
        List<ValidatingWebhook> hooks = current.getWebhooks();
        for (int i = 0; hooks != null && i < hooks.size(); i++) {
          ValidatingWebhook hook = hooks.get(i);
          if (hook.getClientConfig() != null
              && !Objects.equals(caBundle, hook.getClientConfig().getCaBundle())) {
            ops.add(
                "{\"op\":\"add\",\"path\":\"/webhooks/"
                    + i
                    + "/clientConfig/caBundle\",\"value\":\""
                    + caBundle
                    + "\"}");
          }
        }
        if (!ops.isEmpty()) {
          client
              .admissionRegistration()
              .v1()
              .validatingWebhookConfigurations()
              .withName(name)
              .patch(PatchContext.of(PatchType.JSON), "[" + String.join(",", ops) + "]");
          LOG.info(
              "set the caBundle of {} webhook(s) in ValidatingWebhookConfiguration {} to this"
                  + " controller's CA",
              ops.size(),
              name);
        }
        lastFailure = "";
      }
    } catch (RuntimeException e) {
      failed(
          "cannot set the caBundle of ValidatingWebhookConfiguration "
              + name
              + ": "
              + ApiFailure.describe(String.valueOf(client.getMasterUrl()), e));
      delay = retry;
    }
    if (!closed) {
      next = scheduler.schedule(this::check, delay.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  private void failed(String why) {
    if (!why.equals(lastFailure)) {
      LOG.warn("{}; retrying every {}s", why, retry.toSeconds());
      lastFailure = why;
    }
  }

  @Override
  public void close() {
    closed = true;
    ScheduledFuture<?> f = next;
    if (f != null) {
      f.cancel(false);
    }
  }
}
