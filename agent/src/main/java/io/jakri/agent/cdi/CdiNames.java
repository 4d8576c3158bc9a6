package io.jakri.agent.cdi;

/** Names of jakri's CDI devices: kind {@code akri.sh/<configuration>}, one device per slot. */
public final class CdiNames {
  public static final String VENDOR = "akri.sh";

  public static String kind(String configuration) {
    return VENDOR + "/" + configuration;
  }

  public static String qualifiedName(String configuration, String slotDeviceId) {
    return kind(configuration) + "=" + slotDeviceId;
  }

  public static String specFileName(String instance) {
    return VENDOR + "-" + instance + ".json";
  }

  private CdiNames() {}
}
