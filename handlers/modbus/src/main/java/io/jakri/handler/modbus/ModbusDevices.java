package io.jakri.handler.modbus;

import io.jakri.handler.DiscoveredDevice;
import java.util.LinkedHashMap;
import java.util.Map;

/** How an identity becomes a device: fixed, env-safe property names, all {@code MODBUS_}. */
final class ModbusDevices {

  private static final Map<Integer, String> OPTIONAL_OBJECTS =
      Map.of(
          Identity.VENDOR_URL, "MODBUS_VENDOR_URL",
          Identity.PRODUCT_NAME, "MODBUS_PRODUCT_NAME",
          Identity.MODEL_NAME, "MODBUS_MODEL_NAME",
          Identity.USER_APPLICATION_NAME, "MODBUS_USER_APPLICATION_NAME");

  private ModbusDevices() {}

  /** {@code tcp://host:port} (an IPv6 host in brackets). */
  static String endpoint(String host, int port) {
    return "tcp://" + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
  }

  /** Id {@code tcp://host:port/unit}: stable while the device keeps its address and unit. */
  static String id(Identity identity) {
    return endpoint(identity.host(), identity.port()) + "/" + identity.unitId();
  }

  /** A shared device (every node of the network sees the same one). */
  static DiscoveredDevice device(Identity identity) {
    Map<String, String> properties = new LinkedHashMap<>();
    properties.put("MODBUS_HOST", identity.host());
    properties.put("MODBUS_PORT", Integer.toString(identity.port()));
    properties.put("MODBUS_UNIT_ID", Integer.toString(identity.unitId()));
    properties.put("MODBUS_ENDPOINT", endpoint(identity.host(), identity.port()));
    properties.put("MODBUS_VENDOR", identity.vendor());
    properties.put("MODBUS_PRODUCT_CODE", identity.productCode());
    properties.put("MODBUS_REVISION", identity.revision());
    OPTIONAL_OBJECTS.forEach(
        (object, name) -> identity.object(object).ifPresent(v -> properties.put(name, v)));
    return DiscoveredDevice.of(id(identity), properties, true);
  }
}
