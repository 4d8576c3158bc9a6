package io.jakri.agent.configuration;

import com.google.protobuf.CodedOutputStream;
import java.util.Optional;

/**
 * The size of the ListAndWatch messages a Configuration's resources make, against the largest the
 * kubelet's gRPC client takes ({@link ConfigurationParser#KUBELET_MAX_MESSAGE}): counted for the
 * longest slot ids the Configuration can produce ({@code <name>-<6 hex>-<slot>}), every device
 * reported Unhealthy (the longer health string).
 */
final class ListAndWatchSize {

  private static final int UNHEALTHY_LENGTH = "Unhealthy".length();

  private ListAndWatchSize() {}

  /** See {@link ConfigurationParser#listAndWatchProblem}. */
  static Optional<String> problem(String name, int capacity) {
    long bytes = bytes(name.length() + 7, capacity);
    if (bytes <= ConfigurationParser.KUBELET_MAX_MESSAGE) {
      return Optional.empty();
    }
    return Optional.of(
        "spec.capacity "
            + capacity
            + " is too large: an Instance's "
            + capacity
            + " slots make a ListAndWatch message of "
            + bytes
            + " bytes, more than the kubelet accepts ("
            + ConfigurationParser.KUBELET_MAX_MESSAGE
            + " bytes)");
  }

  /** See {@link ConfigurationParser#devicesPerListAndWatch}. */
  static long devicesPer(String name, int capacity) {
    long perDevice = bytes(name.length() + 7, Math.max(1, capacity));
    return ConfigurationParser.KUBELET_MAX_MESSAGE / Math.max(1, perDevice);
  }

  /** Bytes of a ListAndWatchResponse listing {@code slots} devices of an Instance name length. */
  static long bytes(int instanceNameLength, int slots) {
    long total = 0;
    long lower = 0;
    long limit = 10;
    for (int digits = 1; lower < slots; digits++, limit *= 10) {
      // Slots lower..upper-1 have ids of instanceNameLength + 1 + digits characters.
      long upper = Math.min(slots, limit);
      int idLength = instanceNameLength + 1 + digits;
      int device =
          CodedOutputStream.computeTagSize(1)
              + CodedOutputStream.computeUInt32SizeNoTag(idLength)
              + idLength
              + CodedOutputStream.computeTagSize(2)
              + CodedOutputStream.computeUInt32SizeNoTag(UNHEALTHY_LENGTH)
              + UNHEALTHY_LENGTH;
      total +=
          (upper - lower)
              * (CodedOutputStream.computeTagSize(1)
                  + CodedOutputStream.computeUInt32SizeNoTag(device)
                  + device);
      lower = upper;
    }
    return total;
  }
}
