package io.jakri.agent.dra;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The attributes of one slot's DRA device, within DRA's limits: jakri's own ({@code
 * akri.sh/configuration}, {@code akri.sh/instance}, {@code akri.sh/handler}, {@code akri.sh/slot},
 * {@code akri.sh/shared}) and then the device's properties as {@code property.akri.sh/<NAME>}
 * strings, in name order. A property whose name is not a C identifier of at most 32 characters is
 * left out; a value longer than 64 bytes (UTF-8) is replaced by {@code sha256:} and the first 56
 * hex digits of its SHA-256; properties beyond the 32 attributes a device may have are left out.
 * Each such case is listed in {@link #problems()}.
 *
 * @param attributes qualified name to attribute, in the order above
 * @param problems one line per property left out or hashed, naming it and the rule
 */
public record DeviceAttributes(Map<String, DeviceAttribute> attributes, List<String> problems) {

  /** At most this many attributes and capacities together per device. */
  public static final int MAX_ATTRIBUTES = 32;

  /** At most this many bytes in a string attribute value. */
  public static final int MAX_VALUE_BYTES = 64;

  /** At most this many characters in the identifier part of an attribute name. */
  public static final int MAX_IDENTIFIER = 32;

  private static final Pattern C_IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  /** The attributes of slot {@code slot} of a device with these properties. */
  public static DeviceAttributes of(
      String configuration,
      String instance,
      String handler,
      int slot,
      boolean shared,
      Map<String, String> properties) {
    Map<String, DeviceAttribute> out = new LinkedHashMap<>();
    List<String> problems = new ArrayList<>();
    List<String> overLimit = new ArrayList<>();
    out.put(own("configuration"), string(value("configuration", configuration, problems)));
    out.put(own("instance"), string(value("instance", instance, problems)));
    out.put(own("handler"), string(value("handler", handler, problems)));
    out.put(own("slot"), new DeviceAttributeBuilder().withInt((long) slot).build());
    out.put(own("shared"), new DeviceAttributeBuilder().withBool(shared).build());
    for (Map.Entry<String, String> p : new TreeMap<>(properties).entrySet()) {
      String name = p.getKey();
      if (name.length() > MAX_IDENTIFIER || !C_IDENTIFIER.matcher(name).matches()) {
        problems.add(
            "property "
                + name
                + " left out: an attribute name must be a C identifier of at most "
                + MAX_IDENTIFIER
                + " characters");
        continue;
      }
      if (out.size() >= MAX_ATTRIBUTES) {
        overLimit.add(name);
        continue;
      }
      out.put(
          DraNames.PROPERTY_DOMAIN + "/" + name,
          string(value("property " + name, p.getValue() == null ? "" : p.getValue(), problems)));
    }
    if (!overLimit.isEmpty()) {
      problems.add(
          (overLimit.size() == 1 ? "property " : "properties ")
              + String.join(", ", overLimit)
              + " left out: a device has at most "
              + MAX_ATTRIBUTES
              + " attributes (properties are taken in name order)");
    }
    return new DeviceAttributes(out, problems);
  }

  /** The qualified name of one of jakri's own attributes. */
  public static String own(String identifier) {
    return DraNames.DOMAIN + "/" + identifier;
  }

  private static String value(String what, String value, List<String> problems) {
    if (value.getBytes(StandardCharsets.UTF_8).length <= MAX_VALUE_BYTES) {
      return value;
    }
    problems.add(
        what
            + " value hashed: a string attribute holds at most "
            + MAX_VALUE_BYTES
            + " bytes (published as sha256:<56 hex digits>)");
    return "sha256:" + DraNames.hash(value, 56);
  }

  private static DeviceAttribute string(String value) {
    return new DeviceAttributeBuilder().withString(value).build();
  }
}
