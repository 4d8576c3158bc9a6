package io.jakri.controller.admission;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves the key and certificate of {@code tls.crt}/{@code tls.key} and reads them again when
 * either file changes (cert-manager renews the Secret, the kubelet swaps the mounted files),
 * checked at most once per {@code interval} during handshakes. A pair that cannot be read (half
 * written, mismatched) is logged once and the previous pair served until a good one appears.
 */
final class ReloadingKeyManager extends X509ExtendedKeyManager {

  private static final Logger LOG = LoggerFactory.getLogger(ReloadingKeyManager.class);
  private static final String ALIAS = "webhook";

  private record Loaded(PrivateKey key, X509Certificate[] chain, FileTime crt, FileTime key2) {}

  private final Path cert;
  private final Path key;
  private final long intervalNanos;
  private final LongSupplier nanoTime;
  private volatile Loaded loaded;
  private long checkedAt;
  private String lastFailure = "";

  ReloadingKeyManager(Path cert, Path key, Duration interval, LongSupplier nanoTime)
      throws IOException {
    this.cert = cert;
    this.key = key;
    this.intervalNanos = interval.toNanos();
    this.nanoTime = nanoTime;
    this.loaded = load();
    this.checkedAt = nanoTime.getAsLong();
  }

  private Loaded load() throws IOException {
    FileTime crtTime = Files.getLastModifiedTime(cert);
    FileTime keyTime = Files.getLastModifiedTime(key);
    WebhookTls tls = WebhookTls.read(cert, key);
    return new Loaded(tls.key(), tls.chain().toArray(X509Certificate[]::new), crtTime, keyTime);
  }

  /** The pair to serve now, read again if the files changed since the last check. */
  private synchronized Loaded current() {
    long now = nanoTime.getAsLong();
    if (now - checkedAt < intervalNanos) {
      return loaded;
    }
    checkedAt = now;
    try {
      if (Files.getLastModifiedTime(cert).equals(loaded.crt())
          && Files.getLastModifiedTime(key).equals(loaded.key2())) {
        return loaded;
      }
      loaded = load();
      lastFailure = "";
      LOG.info(
          "the admission webhook serves the renewed certificate from {} (valid until {})",
          cert,
          loaded.chain()[0].getNotAfter().toInstant());
    } catch (IOException | RuntimeException e) {
      String why = e.getMessage();
      if (!String.valueOf(why).equals(lastFailure)) {
        LOG.warn("cannot read the renewed webhook certificate: {}; serving the previous one", why);
        lastFailure = String.valueOf(why);
      }
    }
    return loaded;
  }

  /** The certificate served now (for tests and logs). */
  X509Certificate serving() {
    return current().chain()[0];
  }

  @Override
  public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
    return ALIAS;
  }

  @Override
  public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
    return ALIAS;
  }

  @Override
  public X509Certificate[] getCertificateChain(String alias) {
    return ALIAS.equals(alias) ? current().chain().clone() : null;
  }

  @Override
  public PrivateKey getPrivateKey(String alias) {
    return ALIAS.equals(alias) ? current().key() : null;
  }

  @Override
  public String[] getServerAliases(String keyType, Principal[] issuers) {
    return new String[] {ALIAS};
  }

  @Override
  public String[] getClientAliases(String keyType, Principal[] issuers) {
    return new String[0];
  }

  @Override
  public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
    return null;
  }

  List<X509Certificate> chain() {
    return List.of(current().chain());
  }
}
