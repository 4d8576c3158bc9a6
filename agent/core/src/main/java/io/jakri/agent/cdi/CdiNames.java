package io.jakri.agent.cdi;

/**
 * The names jakri gives its CDI (Container Device Interface) devices, shared by the device-plugin
 * path (Allocate's {@code cdi_devices}) and the DRA path (NodePrepareResources' CDI ids).
 *
 * <ul>
 *   <li>kind: {@code akri.sh/<configuration>};
 *   <li>one CDI device per Instance slot, named by the slot's device id {@code <instance>-<n>};
 *   <li>fully qualified id: {@code akri.sh/<configuration>=<instance>-<n>};
 *   <li>one spec file per Instance: {@code akri.sh-<instance>.json} in the CDI directory.
 * </ul>
 */
public final class CdiNames {

  /** The vendor part of every kind. */
  public static final String VENDOR = "akri.sh";

  /** The CDI kind of a Configuration's devices: {@code akri.sh/<configuration>}. */
  public static String kind(String configuration) {
    return VENDOR + "/" + configuration;
  }

  /** The fully qualified CDI device id of one slot: {@code akri.sh/<configuration>=<slot>}. */
  public static String qualifiedName(String configuration, String slotDeviceId) {
    return kind(configuration) + "=" + slotDeviceId;
  }

  /** The spec file of an Instance: {@code akri.sh-<instance>.json}. */
  public static String specFileName(String instance) {
    return VENDOR + "-" + instance + ".json";
  }

  private CdiNames() {}
}
