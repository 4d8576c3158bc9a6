package io.jakri.handler.onvif;

import io.jakri.handler.DiscoveredDevice;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Akri's device contract for a camera. Pure functions.
 *
 * <ul>
 *   <li>id {@code <device service url>-<uuid>} (so an Akri Configuration gets Akri's Instance
 *       names);
 *   <li>shared: every node that sees the camera sees the same one;
 *   <li>properties {@value #SERVICE_URL} and {@value #UUID} always, {@value #IP_ADDRESS} and
 *       {@value #MAC_ADDRESS} when {@code GetNetworkInterfaces} answered.
 * </ul>
 *
 * The names are fixed, so nothing from the network can choose an env name; the values were bounded
 * and checked where they were read ({@link WsDiscovery}, {@link SoapDeviceService}).
 */
public final class OnvifDevices {

  public static final String SERVICE_URL = "ONVIF_DEVICE_SERVICE_URL";
  public static final String UUID = "ONVIF_DEVICE_UUID";
  public static final String IP_ADDRESS = "ONVIF_DEVICE_IP_ADDRESS";
  public static final String MAC_ADDRESS = "ONVIF_DEVICE_MAC_ADDRESS";

  private OnvifDevices() {}

  /** Akri's device id. */
  public static String id(String serviceUrl, String uuid) {
    return serviceUrl + "-" + uuid;
  }

  /** The device for a camera that passed every filter. */
  public static DiscoveredDevice device(
      String serviceUrl, String uuid, Optional<DeviceService.IpAndMac> ipAndMac) {
    Map<String, String> properties = new LinkedHashMap<>();
    properties.put(SERVICE_URL, serviceUrl);
    properties.put(UUID, uuid);
    ipAndMac.ifPresent(
        a -> {
          properties.put(IP_ADDRESS, a.ip());
          properties.put(MAC_ADDRESS, a.mac());
        });
    return DiscoveredDevice.of(id(serviceUrl, uuid), properties, true);
  }
}
