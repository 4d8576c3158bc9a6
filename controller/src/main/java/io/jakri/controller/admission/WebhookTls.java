package io.jakri.controller.admission;

import java.io.IOException;
import java.io.Reader;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The webhook's serving key and certificate chain, and the CA the API server must trust (the
 * webhook configuration's {@code caBundle}): either made at start (a CA of this process, kept only
 * in memory, signing a serving certificate for the given DNS names and IP addresses) or read from
 * PEM files (cert-manager's {@code tls.crt}/{@code tls.key}; the CA is then injected by
 * cert-manager, not by the controller).
 *
 * @param caPem the CA certificate, PEM, to put in the caBundle; empty when read from files
 * @param files where the key and chain were read from, read again when they change; empty when made
 */
public record WebhookTls(
    PrivateKey key, List<X509Certificate> chain, String caPem, Optional<PemFiles> files) {

  /** The PEM files of a certificate (with its chain) and its key. */
  public record PemFiles(Path cert, Path key) {}

  /** How often, at most, renewed files are looked for during handshakes. */
  static final Duration RELOAD_CHECK = Duration.ofSeconds(10);

  private static final Pattern IPV4 = Pattern.compile("[0-9]{1,3}(\\.[0-9]{1,3}){3}");

  public WebhookTls {
    chain = List.copyOf(chain);
  }

  /**
   * A new CA and a serving certificate for {@code names} (DNS names; IPv4 and bracket-less IPv6
   * literals become IP addresses), both P-256, valid for ten years from now.
   */
  public static WebhookTls generate(List<String> names) {
    if (names.isEmpty()) {
      throw new IllegalArgumentException("the webhook's certificate needs at least one name");
    }
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"), new SecureRandom());
      KeyPair ca = generator.generateKeyPair();
      KeyPair serving = generator.generateKeyPair();
      Instant now = Instant.now().minus(1, ChronoUnit.HOURS); // clock skew between nodes
      Instant until = now.plus(3650, ChronoUnit.DAYS);
      X500Name caName = new X500Name("CN=jakri admission webhook CA");
      JcaX509v3CertificateBuilder caBuilder =
          new JcaX509v3CertificateBuilder(
              caName, serial(), Date.from(now), Date.from(until), caName, ca.getPublic());
      caBuilder.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
      caBuilder.addExtension(
          Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      X509Certificate caCert = sign(caBuilder.build(signer(ca.getPrivate())));

      JcaX509v3CertificateBuilder leaf =
          new JcaX509v3CertificateBuilder(
              caName,
              serial(),
              Date.from(now),
              Date.from(until),
              new X500Name("CN=" + names.get(0)),
              serving.getPublic());
      leaf.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      leaf.addExtension(
          Extension.keyUsage,
          true,
          new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
      leaf.addExtension(
          Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
      List<GeneralName> alternatives = new ArrayList<>();
      for (String name : names) {
        boolean ip = IPV4.matcher(name).matches() || name.contains(":");
        alternatives.add(
            ip
                ? new GeneralName(GeneralName.iPAddress, name)
                : new GeneralName(GeneralName.dNSName, name));
      }
      leaf.addExtension(
          Extension.subjectAlternativeName,
          false,
          new GeneralNames(alternatives.toArray(GeneralName[]::new)));
      X509Certificate servingCert = sign(leaf.build(signer(ca.getPrivate())));
      return new WebhookTls(
          serving.getPrivate(), List.of(servingCert, caCert), pem(caCert), Optional.empty());
    } catch (GeneralSecurityException | IOException | OperatorCreationException e) {
      throw new IllegalStateException("cannot create the webhook's certificate: " + e, e);
    }
  }

  /**
   * Reads {@code cert} (the serving certificate, then any intermediates) and {@code key} (PKCS#8 or
   * the traditional EC/RSA form), as cert-manager writes them.
   *
   * @throws IOException with one line saying what is wrong with which file
   */
  public static WebhookTls read(Path cert, Path key) throws IOException {
    List<X509Certificate> chain = new ArrayList<>();
    JcaX509CertificateConverter converter = new JcaX509CertificateConverter();
    try (Reader in = Files.newBufferedReader(cert, StandardCharsets.US_ASCII);
        PEMParser pem = new PEMParser(in)) {
      for (Object o = pem.readObject(); o != null; o = pem.readObject()) {
        if (o instanceof X509CertificateHolder holder) {
          chain.add(converter.getCertificate(holder));
        }
      }
    } catch (GeneralSecurityException | RuntimeException e) {
      throw new IOException(cert + ": not a PEM certificate: " + e.getMessage(), e);
    }
    if (chain.isEmpty()) {
      throw new IOException(cert + ": no PEM certificate in it");
    }
    PrivateKey privateKey;
    try (Reader in = Files.newBufferedReader(key, StandardCharsets.US_ASCII);
        PEMParser pem = new PEMParser(in)) {
      Object o = pem.readObject();
      JcaPEMKeyConverter keys = new JcaPEMKeyConverter();
      if (o instanceof PEMKeyPair pair) {
        privateKey = keys.getKeyPair(pair).getPrivate();
      } else if (o instanceof PrivateKeyInfo info) {
        privateKey = keys.getPrivateKey(info);
      } else {
        throw new IOException(key + ": no PEM private key in it");
      }
    } catch (RuntimeException e) {
      throw new IOException(key + ": not a PEM private key: " + e.getMessage(), e);
    }
    return new WebhookTls(privateKey, chain, "", Optional.of(new PemFiles(cert, key)));
  }

  /**
   * A TLS context serving this key and chain; one read from files serves renewed files once they
   * change (cert-manager renews certificates long before they expire).
   */
  public SSLContext sslContext() {
    return sslContext(RELOAD_CHECK);
  }

  /** As {@link #sslContext()}, renewed files looked for at most once per {@code reloadCheck}. */
  SSLContext sslContext(Duration reloadCheck) {
    if (files.isPresent()) {
      try {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(
            new javax.net.ssl.KeyManager[] {
              new ReloadingKeyManager(
                  files.get().cert(), files.get().key(), reloadCheck, System::nanoTime)
            },
            null,
            new SecureRandom());
        return context;
      } catch (GeneralSecurityException | IOException e) {
        throw new IllegalStateException("cannot serve the webhook's certificate: " + e, e);
      }
    }
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      char[] password = new char[0];
      store.setKeyEntry("webhook", key, password, chain.toArray(Certificate[]::new));
      KeyManagerFactory kmf =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(store, password);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(kmf.getKeyManagers(), null, new SecureRandom());
      return context;
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("cannot serve the webhook's certificate: " + e, e);
    }
  }

  private static BigInteger serial() {
    return new BigInteger(64, new SecureRandom()).add(BigInteger.ONE);
  }

  private static org.bouncycastle.operator.ContentSigner signer(PrivateKey key)
      throws OperatorCreationException {
    return new JcaContentSignerBuilder("SHA256withECDSA").build(key);
  }

  private static X509Certificate sign(X509CertificateHolder holder)
      throws GeneralSecurityException {
    return new JcaX509CertificateConverter().getCertificate(holder);
  }

  private static String pem(X509Certificate cert) throws IOException {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
      writer.writeObject(cert);
    }
    return out.toString();
  }
}
