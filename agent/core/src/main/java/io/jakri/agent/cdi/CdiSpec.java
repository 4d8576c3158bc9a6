package io.jakri.agent.cdi;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jakri.agent.model.ContainerPaths;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponseOrBuilder;
import io.jakri.kubelet.v1beta1.DeviceSpec;
import io.jakri.kubelet.v1beta1.Mount;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Renders the CDI spec of one Instance (the CDI specification's JSON format): kind {@code
 * akri.sh/<configuration>}, one device per slot named by its slot id, and the Instance resource's
 * contract (env, mounts, device nodes, exactly as its Allocate answer gives them) as the spec's
 * {@code containerEdits}, applied once whichever of the Instance's slots a container asks for. Each
 * device's own edits name the slot: {@code JAKRI_SLOT_<H>_<n>=<instance>-<n>} ({@code H} the
 * Instance hash in upper case), so a container knows which slots it holds, and no device's edits
 * are empty (CDI refuses a device without edits). Pure functions, thread-safe.
 *
 * <p>{@code cdiVersion} is the lowest version that carries what the spec uses, as CDI asks writers
 * to do: {@code 0.5.0} (device-node {@code hostPath}, device names that may start with a digit),
 * {@code 0.6.0} when the Configuration name has a dot (dots in the kind's name are 0.6.0).
 * Container annotations are not part of a spec (CDI annotations are metadata for the runtime, not
 * container edits); Allocate still sets them.
 */
public final class CdiSpec {

  /** The env var name prefix of the per-slot edit. */
  public static final String SLOT_ENV_PREFIX = "JAKRI_SLOT_";

  /** Longest mount or device-node path written (Linux's PATH_MAX); longer ones are left out. */
  public static final int MAX_PATH_LENGTH = ContainerPaths.MAX_PATH_LENGTH;

  /** Longest name part of a CDI kind (the Configuration name), per the CDI specification. */
  public static final int MAX_CLASS_LENGTH = 63;

  // The CDI specification's rules for the name part of a kind (its parser: a letter first, a letter
  // or digit last, letters, digits, '_', '-', '.' between).
  private static final Pattern CLASS = Pattern.compile("[A-Za-z]([A-Za-z0-9_.-]*[A-Za-z0-9])?");

  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * One rendered spec.
   *
   * @param json the spec file's content (UTF-8 JSON)
   * @param dropped one message per mount or device node left out, naming the rule it broke
   */
  public record Rendered(byte[] json, List<String> dropped) {
    public Rendered {
      json = json.clone();
      dropped = List.copyOf(dropped);
    }

    @Override
    public byte[] json() {
      return json.clone();
    }
  }

  private CdiSpec() {}

  /**
   * Why {@code configuration} cannot name a CDI kind, if it cannot: CDI wants a letter first and at
   * most {@value #MAX_CLASS_LENGTH} characters of letters, digits, {@code _ - .}, ending in a
   * letter or digit (a Kubernetes name may start with a digit).
   */
  public static Optional<String> kindProblem(String configuration) {
    if (configuration.length() > MAX_CLASS_LENGTH) {
      return Optional.of(
          "the CDI kind's name (the Configuration name) is longer than "
              + MAX_CLASS_LENGTH
              + " characters");
    }
    if (!CLASS.matcher(configuration).matches()) {
      return Optional.of(
          "the CDI kind's name (the Configuration name) must start with a letter and end with a"
              + " letter or digit");
    }
    return Optional.empty();
  }

  /** The CDI version a spec of {@code configuration}'s kind is written with. */
  public static String version(String configuration) {
    return configuration.indexOf('.') >= 0 ? "0.6.0" : "0.5.0";
  }

  /**
   * Renders the spec of Instance {@code instance} of {@code configuration} with {@code capacity}
   * slots, carrying {@code contract} (the Instance resource's Allocate answer). The caller checked
   * {@link #kindProblem}.
   */
  public static Rendered render(
      String instance,
      String configuration,
      int capacity,
      ContainerAllocateResponseOrBuilder contract) {
    List<String> dropped = new ArrayList<>();
    Map<String, Object> edits = new LinkedHashMap<>();
    List<String> env = new ArrayList<>();
    // Sorted, so that the same contract always renders the same bytes.
    new TreeMap<>(contract.getEnvsMap()).forEach((k, v) -> env.add(k + "=" + v));
    if (!env.isEmpty()) {
      edits.put("env", env);
    }
    List<Object> nodes = new ArrayList<>();
    for (DeviceSpec d : contract.getDevicesList()) {
      Optional<String> problem =
          pathProblem(d.getContainerPath())
              .or(() -> pathProblem(d.getHostPath()))
              .or(() -> ContainerPaths.permissionsProblem(d.getPermissions()));
      if (problem.isPresent()) {
        dropped.add("device node " + shortened(d.getContainerPath()) + ": " + problem.get());
        continue;
      }
      Map<String, Object> node = new LinkedHashMap<>();
      node.put("path", d.getContainerPath());
      node.put("hostPath", d.getHostPath());
      node.put("permissions", d.getPermissions());
      nodes.add(node);
    }
    if (!nodes.isEmpty()) {
      edits.put("deviceNodes", nodes);
    }
    List<Object> mounts = new ArrayList<>();
    for (Mount m : contract.getMountsList()) {
      Optional<String> problem =
          pathProblem(m.getContainerPath()).or(() -> pathProblem(m.getHostPath()));
      if (problem.isPresent()) {
        dropped.add("mount " + shortened(m.getContainerPath()) + ": " + problem.get());
        continue;
      }
      Map<String, Object> mount = new LinkedHashMap<>();
      mount.put("hostPath", m.getHostPath());
      mount.put("containerPath", m.getContainerPath());
      // A bind mount, as container runtimes make of a device plugin's mount.
      mount.put("type", "bind");
      mount.put("options", List.of("rbind", "rprivate", m.getReadOnly() ? "ro" : "rw"));
      mounts.add(mount);
    }
    if (!mounts.isEmpty()) {
      edits.put("mounts", mounts);
    }
    String hash = instance.substring(instance.lastIndexOf('-') + 1).toUpperCase(Locale.ROOT);
    List<Object> devices = new ArrayList<>(capacity);
    for (int n = 0; n < capacity; n++) {
      String slot = instance + "-" + n;
      Map<String, Object> device = new LinkedHashMap<>();
      device.put("name", slot);
      device.put(
          "containerEdits", Map.of("env", List.of(SLOT_ENV_PREFIX + hash + "_" + n + "=" + slot)));
      devices.add(device);
    }
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("cdiVersion", version(configuration));
    spec.put("kind", CdiNames.kind(configuration));
    spec.put("devices", devices);
    if (!edits.isEmpty()) {
      spec.put("containerEdits", edits);
    }
    try {
      // Through a String: a lone surrogate in a value (a plugin's odd text) becomes '?' in UTF-8
      // instead of failing the byte-level generator.
      return new Rendered(JSON.writeValueAsString(spec).getBytes(StandardCharsets.UTF_8), dropped);
    } catch (JsonProcessingException e) {
      // Maps, lists and strings always serialize.
      throw new UncheckedIOException(e);
    }
  }

  // Only the form: discovery already held every entry against all of ContainerPaths' rules (with
  // the operator's exceptions); this keeps a spec valid whatever contract it is given.
  private static Optional<String> pathProblem(String path) {
    return ContainerPaths.formProblem(path).map(p -> "a path " + p);
  }

  private static String shortened(String path) {
    String p = path.length() <= 80 ? path : path.substring(0, 80) + "...";
    return io.jakri.logging.LogText.quote(p);
  }
}
