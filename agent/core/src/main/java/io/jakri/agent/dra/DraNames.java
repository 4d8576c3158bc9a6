package io.jakri.agent.dra;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The names jakri gives its Dynamic Resource Allocation objects. Driver {@code akri.sh}; one pool
 * per node and Configuration, {@code <node>-<configuration>}, for the devices only that node sees,
 * and one pool per Configuration, {@code <configuration>-shared}, for its shared devices (each
 * published once, with the nodes that see it); one device per Instance slot, named by the slot id
 * {@code <instance>-<n>} when that is a DNS label (else a DNS label derived from it with a hash);
 * slices {@code <pool>-akri.sh-<index>}; a DeviceClass {@code <configuration>.akri.sh} per
 * Configuration.
 */
public final class DraNames {

  /** The DRA driver name (also the kubelet plugin's name). */
  public static final String DRIVER = "akri.sh";

  /** The attribute domain of jakri's own attributes ({@code akri.sh/configuration}, ...). */
  public static final String DOMAIN = DRIVER;

  /** The attribute domain of device properties ({@code property.akri.sh/<NAME>}). */
  public static final String PROPERTY_DOMAIN = "property." + DRIVER;

  static final int LABEL_MAX = 63;
  static final int SUBDOMAIN_MAX = 253;

  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");

  /** The pool of one Configuration's devices on one node. */
  public static String pool(String node, String configuration) {
    return subdomain(node + "-" + configuration);
  }

  /** The pool of one Configuration's shared devices, whichever nodes see them. */
  public static String sharedPool(String configuration) {
    return subdomain(configuration + "-shared");
  }

  /** The ResourceSlice holding part {@code index} of a pool. */
  public static String slice(String pool, int index) {
    String suffix = "-" + DRIVER + "-" + index;
    if (pool.length() + suffix.length() <= SUBDOMAIN_MAX) {
      return pool + suffix;
    }
    return trim(pool.substring(0, SUBDOMAIN_MAX - suffix.length() - 9))
        + "-"
        + hash(pool, 8)
        + suffix;
  }

  /** The DeviceClass that selects the devices of one Configuration. */
  public static String deviceClass(String configuration) {
    return subdomain(configuration + "." + DRIVER);
  }

  /**
   * The DRA device name of a slot: the slot id when it is a DNS label, else the slot id lowercased
   * with every character outside {@code [a-z0-9-]} turned into {@code -}, cut to leave room for
   * {@code -<8 hex of SHA-256 of the slot id>}.
   */
  public static String device(String slotId) {
    if (isDnsLabel(slotId)) {
      return slotId;
    }
    String clean = slotId.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9-]", "-");
    String tail = "-" + hash(slotId, 8);
    if (clean.length() > LABEL_MAX - tail.length()) {
      clean = clean.substring(0, LABEL_MAX - tail.length());
    }
    clean = clean.replaceAll("^-+", "").replaceAll("-+$", "");
    return (clean.isEmpty() ? "d" : clean) + tail;
  }

  public static boolean isDnsLabel(String s) {
    return s.length() <= LABEL_MAX && DNS_LABEL.matcher(s).matches();
  }

  /** A DNS subdomain as given when it fits, else cut with a hash of the whole at the end. */
  private static String subdomain(String s) {
    if (s.length() <= SUBDOMAIN_MAX) {
      return s;
    }
    return trim(s.substring(0, SUBDOMAIN_MAX - 9)) + "-" + hash(s, 8);
  }

  /** Without the dots and dashes a cut may leave at the end. */
  private static String trim(String s) {
    return s.replaceAll("[-.]+$", "");
  }

  /** The first {@code hexDigits} hex digits of the SHA-256 of {@code s}'s UTF-8 bytes. */
  static String hash(String s, int hexDigits) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d).substring(0, hexDigits);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private DraNames() {}
}
