package io.jakri.broker.device;

import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The devices of one class resource given to a container, read from {@code <P>_NUM_DEVICES} and
 * {@code <P>_DEV<i>_<K>} (DESIGN §5).
 *
 * @param prefix {@code P}: the resource name upper-cased, {@code .} dropped, {@code /} and {@code
 *     -} turned into {@code _} ({@code example.com/widget} → {@code EXAMPLECOM_WIDGET}); the
 *     resource name cannot be recovered from it exactly
 * @param numDevices the count the container was told ({@code <P>_NUM_DEVICES})
 * @param devices device {@code i} is {@code devices.get(i)}, ordered by slot id as the agent gave
 *     them; at most {@value DeviceEnv#MAX_DEVICES}, so fewer than {@code numDevices} only when the
 *     count was over that bound
 */
public record ClassGrant(String prefix, int numDevices, List<Device> devices) implements Grant {

  private static final Pattern PREFIX = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  public ClassGrant {
    if (prefix == null
        || prefix.length() > DeviceEnv.MAX_NAME_LENGTH
        || !PREFIX.matcher(prefix).matches()) {
      throw new IllegalArgumentException("prefix must be an env var name");
    }
    devices = List.copyOf(devices);
    if (numDevices < 1) {
      throw new IllegalArgumentException("numDevices must be at least 1");
    }
    if (devices.size() != Math.min(numDevices, DeviceEnv.MAX_DEVICES)) {
      throw new IllegalArgumentException("devices must hold min(numDevices, MAX_DEVICES) entries");
    }
  }

  /** The env name prefix for a class resource name, as the agent computes it. */
  public static String prefixOf(String resourceName) {
    return resourceName
        .toUpperCase(Locale.ROOT)
        .replace(".", "")
        .replace('/', '_')
        .replace('-', '_');
  }

  /** Whether this grant is for class resource {@code resourceName}. */
  public boolean isFor(String resourceName) {
    return prefix.equals(prefixOf(resourceName));
  }
}
