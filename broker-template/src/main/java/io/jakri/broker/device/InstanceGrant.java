package io.jakri.broker.device;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One Instance's device, read from the {@code K} / {@code K_<H>} pairs of DESIGN §5. Requesting
 * {@code akri.sh/<instance>} gives one such grant; the default class {@code
 * akri.sh/<configuration>} gives one per device besides its {@link ClassGrant}.
 *
 * @param hash the Instance's hash as it appears in env names: six upper-case hex digits ({@code
 *     8120FE} for Instance {@code akri-debug-echo-foo-8120fe})
 * @param device the properties, named without the {@code _<H>} suffix
 */
public record InstanceGrant(String hash, Device device) implements Grant {

  private static final Pattern HASH = Pattern.compile("[0-9A-F]{6}");

  public InstanceGrant {
    Objects.requireNonNull(device, "device");
    if (hash == null || !HASH.matcher(hash).matches()) {
      throw new IllegalArgumentException("hash must be six upper-case hex digits");
    }
  }

  @Override
  public List<Device> devices() {
    return List.of(device);
  }

  /** The suffix of the Instance name: {@code <configuration>-<suffix>}, lower case. */
  public String instanceNameSuffix() {
    return hash.toLowerCase(Locale.ROOT);
  }
}
