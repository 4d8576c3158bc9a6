package io.jakri.controller.broker;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * Deterministic names of the objects the controller creates, and label values derived from names.
 *
 * <p>Scheme, Akri's: a broker Pod is {@code <node>-<instance>-pod} for a shared Instance and {@code
 * <instance>-pod} for an unshared one (its name already has node-specific content); a broker Job is
 * {@code <instance>-<generation>-job} (a new Configuration generation gives a new Job); Services
 * are {@code <instance>-svc} and {@code <configuration>-svc}. Dots in an Instance name become
 * {@code -} as in Akri.
 *
 * <p>A Pod name is a DNS-1123 subdomain of at most 253 characters (what the API server requires of
 * Pod names; the node name may have dots); Job and Service names are DNS-1123 labels of at most 63
 * characters (Service names also start with a letter, as DNS-1035 requires). When the plain form is
 * too long or has characters that are not allowed (Akri would fail to create it), the base is cut
 * to a label and followed by {@code -<10 hex digits of SHA-256 over the whole plain form>} before
 * the suffix, so two different plain forms still give different names (up to a 40-bit hash
 * collision). Pure functions; thread-safe.
 */
public final class BrokerNames {

  /** Longest DNS-1123 label. */
  public static final int MAX_LENGTH = 63;

  /** Longest DNS-1123 subdomain (and Pod name). */
  public static final int MAX_SUBDOMAIN_LENGTH = 253;

  private static final Pattern LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  private static final Pattern SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern LABEL_VALUE =
      Pattern.compile("([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?");

  private BrokerNames() {}

  /**
   * The broker Pod of {@code instance} on {@code node}: Akri's {@code <node>-<instance>-pod} when
   * the Instance is shared, {@code <instance>-pod} when not.
   */
  public static String podName(String instance, String node, boolean shared) {
    String base = (shared ? node + "-" : "") + instance.replace('.', '-');
    String plain = base + "-pod";
    if (plain.length() <= MAX_SUBDOMAIN_LENGTH && SUBDOMAIN.matcher(plain).matches()) {
      return plain;
    }
    return fit(base, "-pod", false);
  }

  /** The broker Job of {@code instance} for Configuration generation {@code generation}. */
  public static String jobName(String instance, long generation) {
    return fit(instance + "-" + generation, "-job", false);
  }

  /** The Service of one Instance's brokers. */
  public static String instanceServiceName(String instance) {
    return fit(instance, "-svc", true);
  }

  /** The Service of all brokers of one Configuration. */
  public static String configurationServiceName(String configuration) {
    return fit(configuration, "-svc", true);
  }

  /**
   * {@code value} when it is a valid label value (at most 63 characters of alphanumerics, {@code
   * -_.}, alphanumeric at both ends); otherwise a shortened, hashed form that is one.
   */
  public static String labelValue(String value) {
    if (value.length() <= MAX_LENGTH && LABEL_VALUE.matcher(value).matches()) {
      return value;
    }
    String cleaned = value.replaceAll("[^-A-Za-z0-9_.]", "-");
    String hash = sha256Hex(value).substring(0, 10);
    String prefix = cleaned.substring(0, Math.min(cleaned.length(), MAX_LENGTH - 11));
    prefix = prefix.replaceAll("^[^A-Za-z0-9]+", "").replaceAll("[^A-Za-z0-9]+$", "");
    return prefix.isEmpty() ? hash : prefix + "-" + hash;
  }

  /** Whether {@code name} is a DNS-1123 label of at most 63 characters. */
  public static boolean isDnsLabel(String name) {
    return name.length() <= MAX_LENGTH && LABEL.matcher(name).matches();
  }

  static String fit(String base, String suffix, boolean startWithLetter) {
    String plain = base + suffix;
    boolean letterOk =
        !startWithLetter || (!plain.isEmpty() && Character.isLetter(plain.charAt(0)));
    if (isDnsLabel(plain) && letterOk) {
      return plain;
    }
    String hash = sha256Hex(plain).substring(0, 10);
    String cleaned = base.toLowerCase(java.util.Locale.ROOT).replaceAll("[^-a-z0-9]", "-");
    if (startWithLetter && (cleaned.isEmpty() || !Character.isLetter(cleaned.charAt(0)))) {
      cleaned = "x" + cleaned;
    }
    int keep = MAX_LENGTH - suffix.length() - hash.length() - 1;
    String prefix = cleaned.substring(0, Math.min(cleaned.length(), keep)).replaceAll("-+$", "");
    return prefix.isEmpty() ? "x-" + hash + suffix : prefix + "-" + hash + suffix;
  }

  /** Lowercase hex SHA-256 of the UTF-8 bytes of {@code text}. */
  public static String sha256Hex(String text) {
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(d.digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
