package io.jakri.crd;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Optional;
import org.bouncycastle.crypto.digests.Blake2bDigest;

/**
 * Akri-compatible Instance names: {@code <configuration>-<h>}, where {@code h} is the lowercase hex
 * of a BLAKE2b digest with a 3-byte digest length (a real 24-bit BLAKE2b, not a truncated 512-bit
 * one) over the UTF-8 device id, with the node name appended (no separator) when the device is not
 * shared. Pure functions, thread-safe.
 */
public final class InstanceNames {

  private InstanceNames() {}

  /** The 6-hex-digit hash of a device id; {@code node} is appended for unshared devices. */
  public static String hash(String deviceId, Optional<String> node) {
    Blake2bDigest digest = new Blake2bDigest(24);
    byte[] input = (deviceId + node.orElse("")).getBytes(StandardCharsets.UTF_8);
    digest.update(input, 0, input.length);
    byte[] out = new byte[digest.getDigestSize()];
    digest.doFinal(out, 0);
    return HexFormat.of().formatHex(out);
  }

  /** The Instance name for a device seen on {@code node}. */
  public static String instanceName(
      String configuration, String deviceId, boolean shared, String node) {
    return configuration + "-" + hash(deviceId, shared ? Optional.empty() : Optional.of(node));
  }

  /** The id of slot {@code n} of an Instance: {@code <instance>-<n>}. */
  public static String slotId(String instance, int n) {
    return instance + "-" + n;
  }

  /** The numeric suffix of a slot id, or -1 when it has none. */
  public static int slotIndex(String slotId) {
    int dash = slotId.lastIndexOf('-');
    try {
      return Integer.parseInt(slotId.substring(dash + 1));
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
