package io.jakri.broker.http;

import io.jakri.broker.device.ClassGrant;
import io.jakri.broker.device.Device;
import io.jakri.broker.device.DeviceEnv;
import io.jakri.broker.device.InstanceGrant;
import io.jakri.broker.device.Property;
import java.util.List;

/**
 * Renders a {@link DeviceEnv} as the JSON body of {@code GET /device}:
 *
 * <pre>{@code
 * {
 *   "classes": [
 *     {"prefix": "EXAMPLECOM_WIDGET", "numDevices": 1,
 *      "devices": [{"index": 0, "properties": {"ID": "0001", "IP": "192.168.0.200"}}]}
 *   ],
 *   "instances": [
 *     {"hash": "8120FE", "instanceNameSuffix": "8120fe",
 *      "properties": {"DEBUG_ECHO_DESCRIPTION": "foo0"}}
 *   ],
 *   "warnings": []
 * }
 * }</pre>
 *
 * Pure function; every string goes through {@link Json#quote}.
 */
public final class DeviceJson {

  private DeviceJson() {}

  /** The JSON document for {@code env}, two-space indented, ending in a newline. */
  public static String render(DeviceEnv env) {
    StringBuilder out = new StringBuilder();
    out.append("{\n  \"classes\": [");
    List<ClassGrant> classes = env.classes();
    for (int c = 0; c < classes.size(); c++) {
      ClassGrant grant = classes.get(c);
      out.append(c == 0 ? "\n" : ",\n")
          .append("    {\"prefix\": ")
          .append(Json.quote(grant.prefix()))
          .append(", \"numDevices\": ")
          .append(grant.numDevices())
          .append(", \"devices\": [");
      for (int i = 0; i < grant.devices().size(); i++) {
        out.append(i == 0 ? "\n" : ",\n")
            .append("      {\"index\": ")
            .append(i)
            .append(", \"properties\": ");
        properties(out, grant.devices().get(i));
        out.append('}');
      }
      out.append(grant.devices().isEmpty() ? "]}" : "\n    ]}");
    }
    out.append(classes.isEmpty() ? "],\n" : "\n  ],\n");
    out.append("  \"instances\": [");
    List<InstanceGrant> instances = env.instances();
    for (int i = 0; i < instances.size(); i++) {
      InstanceGrant grant = instances.get(i);
      out.append(i == 0 ? "\n" : ",\n")
          .append("    {\"hash\": ")
          .append(Json.quote(grant.hash()))
          .append(", \"instanceNameSuffix\": ")
          .append(Json.quote(grant.instanceNameSuffix()))
          .append(", \"properties\": ");
      properties(out, grant.device());
      out.append('}');
    }
    out.append(instances.isEmpty() ? "],\n" : "\n  ],\n");
    out.append("  \"warnings\": [");
    for (int i = 0; i < env.warnings().size(); i++) {
      out.append(i == 0 ? "" : ", ").append(Json.quote(env.warnings().get(i)));
    }
    return out.append("]\n}\n").toString();
  }

  private static void properties(StringBuilder out, Device device) {
    out.append('{');
    List<Property> properties = device.properties();
    for (int i = 0; i < properties.size(); i++) {
      Property p = properties.get(i);
      out.append(i == 0 ? "" : ", ")
          .append(Json.quote(p.name()))
          .append(": ")
          .append(Json.quote(p.value()));
    }
    out.append('}');
  }
}
