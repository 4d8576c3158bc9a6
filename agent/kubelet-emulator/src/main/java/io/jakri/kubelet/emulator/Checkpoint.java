package io.jakri.kubelet.emulator;

import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Writes {@code kubelet_internal_checkpoint} in the shape of the kubelet's v2 checkpoint: {@code
 * {"Data":{"PodDeviceEntries":[...],"RegisteredDevices":{...}},"Checksum":0}}. PodUID holds {@code
 * namespace/name} (the emulator has no UIDs) and the checksum is not computed, so a real kubelet
 * would not load this file; it exists for inspection and so that restart() has a checkpoint file to
 * keep.
 */
final class Checkpoint {
  static final String FILE_NAME = "kubelet_internal_checkpoint";

  private static final Pattern EMULATOR_CHECKSUM = Pattern.compile("\"Checksum\":0}\\s*$");

  private Checkpoint() {}

  /**
   * Whether {@code json} is a checkpoint the emulator wrote (checksum 0): a real kubelet's carries
   * the checksum of its data, which the emulator must not overwrite.
   */
  static boolean writtenByEmulator(String json) {
    return json.startsWith("{\"Data\":") && EMULATOR_CHECKSUM.matcher(json).find();
  }

  static String json(Collection<AdmittedPod> pods, Map<String, List<String>> registeredDevices) {
    StringBuilder b = new StringBuilder("{\"Data\":{\"PodDeviceEntries\":[");
    boolean first = true;
    for (AdmittedPod pod : pods) {
      for (var container : pod.admission().containers().entrySet()) {
        Map<String, ContainerAllocateResponse> responses =
            pod.responses().getOrDefault(container.getKey(), Map.of());
        for (var resource : container.getValue().deviceIds().entrySet()) {
          if (!first) {
            b.append(',');
          }
          first = false;
          b.append("{\"PodUID\":").append(str(pod.key()));
          b.append(",\"ContainerName\":").append(str(container.getKey()));
          b.append(",\"ResourceName\":").append(str(resource.getKey()));
          b.append(",\"DeviceIDs\":{\"-1\":").append(strings(resource.getValue())).append('}');
          ContainerAllocateResponse r =
              responses.getOrDefault(
                  resource.getKey(), ContainerAllocateResponse.getDefaultInstance());
          b.append(",\"AllocResp\":")
              .append(str(Base64.getEncoder().encodeToString(r.toByteArray())));
          b.append('}');
        }
      }
    }
    b.append("],\"RegisteredDevices\":{");
    first = true;
    for (var e : registeredDevices.entrySet()) {
      if (!first) {
        b.append(',');
      }
      first = false;
      b.append(str(e.getKey())).append(':').append(strings(e.getValue()));
    }
    return b.append("}},\"Checksum\":0}").toString();
  }

  /** Replaces the file atomically (temp file + rename) so readers never see half a file. */
  static void write(Path dir, String json) throws IOException {
    Path target = dir.resolve(FILE_NAME);
    Path tmp = dir.resolve(FILE_NAME + ".tmp");
    Files.writeString(tmp, json, StandardCharsets.UTF_8);
    try {
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  private static String strings(List<String> values) {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < values.size(); i++) {
      if (i > 0) {
        b.append(',');
      }
      b.append(str(values.get(i)));
    }
    return b.append(']').toString();
  }

  static String str(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
