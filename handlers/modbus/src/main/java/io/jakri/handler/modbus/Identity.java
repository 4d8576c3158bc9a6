package io.jakri.handler.modbus;

import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What a Modbus device says about itself (Read Device Identification), and where it was asked.
 *
 * @param host the address connected to (an IP literal)
 * @param port the TCP port
 * @param unitId the unit id that answered
 * @param conformity the conformity level byte of the last page
 * @param objects object id to value: at least VendorName (0), ProductCode (1) and
 *     MajorMinorRevision (2); regular objects (3 to 6) when the device has them
 */
record Identity(String host, int port, int unitId, int conformity, Map<Integer, String> objects) {

  static final int VENDOR_NAME = 0x00;
  static final int PRODUCT_CODE = 0x01;
  static final int REVISION = 0x02;
  static final int VENDOR_URL = 0x03;
  static final int PRODUCT_NAME = 0x04;
  static final int MODEL_NAME = 0x05;
  static final int USER_APPLICATION_NAME = 0x06;

  Identity {
    objects = Collections.unmodifiableMap(new TreeMap<>(objects));
  }

  String vendor() {
    return objects.getOrDefault(VENDOR_NAME, "");
  }

  String productCode() {
    return objects.getOrDefault(PRODUCT_CODE, "");
  }

  String revision() {
    return objects.getOrDefault(REVISION, "");
  }

  Optional<String> object(int id) {
    return Optional.ofNullable(objects.get(id));
  }
}
