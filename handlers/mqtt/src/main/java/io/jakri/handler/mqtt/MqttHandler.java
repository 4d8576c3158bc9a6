package io.jakri.handler.mqtt;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;
import org.pf4j.Extension;

/**
 * The {@code mqtt} discovery handler: devices announced on an MQTT broker, by Home Assistant MQTT
 * discovery or on any topic (see {@link MqttDetails}). Credentials come from discoveryProperties
 * {@code username}, {@code password} and {@code caCertificate} (PEM) and are never logged.
 * Stateless; each {@link #start} returns an independent {@link MqttDiscovery} with one client.
 */
@Extension
public final class MqttHandler implements DiscoveryHandler {

  static final String USERNAME = "username";
  static final String PASSWORD = "password";
  static final String CA_CERTIFICATE = "caCertificate";

  @Override
  public String name() {
    return "mqtt";
  }

  @Override
  public Validation validate(DiscoveryContext context) {
    return MqttDetails.parse(context.discoveryDetails()).validation();
  }

  @Override
  public Discovery start(DiscoveryContext context, DeviceListener listener)
      throws InvalidDetailsException {
    MqttDetails details = MqttDetails.parse(context.discoveryDetails()).orThrow();
    PahoSession.Access access = access(context);
    String clientId = clientId(context);
    MqttDiscovery discovery =
        new MqttDiscovery(
            context.configurationName(),
            details,
            listener,
            context.scheduler(),
            () ->
                new PahoSession(
                    details.brokers(),
                    details.mode().subscriptions(),
                    clientId,
                    access,
                    context.scheduler()));
    discovery.start();
    return discovery;
  }

  static PahoSession.Access access(DiscoveryContext context) throws InvalidDetailsException {
    Optional<String> username =
        Optional.ofNullable(context.discoveryProperties().get(USERNAME)).filter(s -> !s.isEmpty());
    Optional<char[]> password =
        Optional.ofNullable(context.discoveryProperties().get(PASSWORD))
            .filter(s -> !s.isEmpty())
            .map(String::toCharArray);
    if (password.isPresent() && username.isEmpty()) {
      throw new InvalidDetailsException(
          "discoveryProperties: " + PASSWORD + " is set but " + USERNAME + " is not");
    }
    Optional<SSLSocketFactory> tls = Optional.empty();
    String pem = context.discoveryProperties().get(CA_CERTIFICATE);
    if (pem != null && !pem.isBlank()) {
      tls = Optional.of(trusting(pem));
    }
    return new PahoSession.Access(username, password, tls);
  }

  /** A socket factory trusting exactly the certificates in {@code pem}. */
  static SSLSocketFactory trusting(String pem) throws InvalidDetailsException {
    try {
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      int i = 0;
      for (Certificate c :
          CertificateFactory.getInstance("X.509")
              .generateCertificates(
                  new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))) {
        store.setCertificateEntry("ca-" + i++, c);
      }
      if (i == 0) {
        throw new InvalidDetailsException(
            "discoveryProperties: " + CA_CERTIFICATE + " holds no PEM certificate");
      }
      TrustManagerFactory trust =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trust.init(store);
      SSLContext ssl = SSLContext.getInstance("TLS");
      ssl.init(null, trust.getTrustManagers(), null);
      return ssl.getSocketFactory();
    } catch (GeneralSecurityException | java.io.IOException e) {
      throw new InvalidDetailsException(
          "discoveryProperties: "
              + CA_CERTIFICATE
              + " is not a PEM certificate: "
              + e.getMessage());
    }
  }

  /**
   * At most 23 characters (MQTT 3.1.1's guaranteed length), distinct per node, Configuration, run.
   */
  static String clientId(DiscoveryContext context) {
    try {
      byte[] hash =
          MessageDigest.getInstance("SHA-256")
              .digest(
                  (context.nodeName() + "/" + context.configurationName())
                      .getBytes(StandardCharsets.UTF_8));
      return "jakri"
          + HexFormat.of().formatHex(hash).substring(0, 12)
          + HexFormat.of()
              .formatHex(
                  new byte[] {
                    (byte) ThreadLocalRandom.current().nextInt(),
                    (byte) ThreadLocalRandom.current().nextInt(),
                    (byte) ThreadLocalRandom.current().nextInt()
                  });
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}
