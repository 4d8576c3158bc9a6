package io.jakri.handler.onvif;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.Objects;

/**
 * A WS-Security UsernameToken with a password digest (OASIS UsernameToken Profile 1.0 §3.1,
 * required by ONVIF Core §5.9.4): {@code Password_Digest = Base64(SHA-1(nonce + created +
 * password))} where {@code nonce} is the raw nonce bytes (sent base64-encoded) and {@code created}
 * the UTC time in the {@code wsu:Created} element.
 *
 * @param username the user name, sent in clear
 * @param nonce the nonce, base64
 * @param created the creation time, e.g. {@code 2026-11-24T05:00:00.000Z}
 * @param digest the password digest, base64
 */
public record UsernameToken(String username, String nonce, String created, String digest) {

  private static final DateTimeFormatter CREATED =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  public UsernameToken {
    Objects.requireNonNull(username, "username");
    Objects.requireNonNull(nonce, "nonce");
    Objects.requireNonNull(created, "created");
    Objects.requireNonNull(digest, "digest");
  }

  /** A fresh token: 16 random nonce bytes, created now. */
  public static UsernameToken create(
      String username, String password, Clock clock, SecureRandom random) {
    byte[] nonce = new byte[16];
    random.nextBytes(nonce);
    String created = CREATED.format(Instant.now(clock).truncatedTo(ChronoUnit.MILLIS));
    return of(username, password, nonce, created);
  }

  /** The token for given nonce bytes and creation time (deterministic; for tests and checks). */
  public static UsernameToken of(String username, String password, byte[] nonce, String created) {
    return new UsernameToken(
        username,
        Base64.getEncoder().encodeToString(nonce),
        created,
        digest(nonce, created, password));
  }

  /** {@code Base64(SHA-1(nonce + created + password))}. */
  public static String digest(byte[] nonce, String created, String password) {
    try {
      MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
      sha1.update(nonce);
      sha1.update(created.getBytes(StandardCharsets.UTF_8));
      sha1.update(password.getBytes(StandardCharsets.UTF_8));
      return Base64.getEncoder().encodeToString(sha1.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-1", e);
    }
  }

  /** The {@code wsse:Security} header element holding this token. */
  String securityHeader() {
    return "<wsse:Security s:mustUnderstand=\"1\""
        + " xmlns:wsse=\"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd\""
        + " xmlns:wsu=\"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd\">"
        + "<wsse:UsernameToken><wsse:Username>"
        + Xml.escape(username)
        + "</wsse:Username>"
        + "<wsse:Password Type=\"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest\">"
        + digest
        + "</wsse:Password>"
        + "<wsse:Nonce EncodingType=\"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary\">"
        + nonce
        + "</wsse:Nonce>"
        + "<wsu:Created>"
        + created
        + "</wsu:Created></wsse:UsernameToken></wsse:Security>";
  }

  @Override
  public String toString() {
    return "UsernameToken[username=" + username + ", created=" + created + "]";
  }
}
