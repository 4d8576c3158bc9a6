package io.jakri.agent.model;

import io.jakri.handler.Names;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The broker contract (DESIGN §5): how device properties become container env vars. Pure functions,
 * thread-safe.
 *
 * <ul>
 *   <li>Instance resource: every property {@code K=V} as {@code K} and {@code K_<H>} ({@code H} =
 *       the Instance hash in upper case).
 *   <li>Class resource with devices 0..n-1 (ordered by slot id): {@code <P>_NUM_DEVICES=n}, {@code
 *       <P>_DEV<i>_<K>} for every device and property, and {@code <P>_<K>} for device 0, where
 *       {@code P} is the resource name upper-cased with {@code .} dropped and {@code /}, {@code -}
 *       turned into {@code _}.
 *   <li>A device's own env ({@link io.jakri.handler.DiscoveredDevice#env()}, such as the simple
 *       device plugin's {@code <ENV_PREFIX>_<device id>}) is given under exactly its names on both
 *       resources, for every device the container gets; the names above win on a clash.
 * </ul>
 *
 * Property names must be POSIX env names, a device's own env names those Kubernetes accepts; device
 * properties must not shadow reserved names (they may come from the network); names and values are
 * bounded. What fails these rules never reaches a container.
 */
public final class EnvContract {

  /** Longest env var name accepted. */
  public static final int MAX_NAME_LENGTH = 253;

  /** Longest env var value accepted, in characters. */
  public static final int MAX_VALUE_LENGTH = 4096;

  /** Most properties taken from one device. */
  public static final int MAX_PROPERTIES = 256;

  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  private static final String RESERVED_REASON =
      "the name is reserved (it would change how programs in the container run)";

  private static final Set<String> RESERVED =
      Set.of(
          "PATH",
          "HOME",
          "HOSTNAME",
          "USER",
          "SHELL",
          "PWD",
          "TERM",
          "IFS",
          "ENV",
          "BASH_ENV",
          "JAVA_TOOL_OPTIONS",
          "_JAVA_OPTIONS",
          "JDK_JAVA_OPTIONS",
          "JAVA_OPTS",
          "CLASSPATH",
          "PYTHONPATH",
          "PYTHONSTARTUP",
          "PERL5LIB",
          "PERL5OPT",
          "RUBYOPT",
          "NODE_OPTIONS",
          "GCONV_PATH",
          "HOSTALIASES",
          "TMPDIR",
          "SSL_CERT_FILE",
          "SSL_CERT_DIR",
          "HTTP_PROXY",
          "HTTPS_PROXY",
          "NO_PROXY",
          "http_proxy",
          "https_proxy",
          "no_proxy");

  private static final List<String> RESERVED_PREFIXES =
      List.of("LD_", "DYLD_", "KUBERNETES_", "BASH_FUNC_");

  private EnvContract() {}

  /** Whether {@code name} is a valid env var name of acceptable length. */
  public static boolean validName(String name) {
    return name != null && name.length() <= MAX_NAME_LENGTH && NAME.matcher(name).matches();
  }

  /** Whether a device property must not use {@code name} (it would change how programs run). */
  public static boolean reserved(String name) {
    if (RESERVED.contains(name)) {
      return true;
    }
    String upper = name.toUpperCase(Locale.ROOT);
    return RESERVED.contains(upper) || RESERVED_PREFIXES.stream().anyMatch(upper::startsWith);
  }

  private static boolean validValue(String value) {
    return value != null && value.length() <= MAX_VALUE_LENGTH && value.indexOf('\0') < 0;
  }

  /**
   * Why an env entry never reaches a container, if it does not: an invalid or over-long name, a
   * reserved name (unless {@code reservedAllowed}), a value with a NUL character or over {@link
   * #MAX_VALUE_LENGTH} characters. The text names the rule, not the value.
   */
  public static Optional<String> dropReason(String name, String value, boolean reservedAllowed) {
    if (name == null || name.length() > MAX_NAME_LENGTH) {
      return Optional.of("the name is longer than " + MAX_NAME_LENGTH + " characters");
    }
    if (!NAME.matcher(name).matches()) {
      return Optional.of("the name is not an env var name ([A-Za-z_][A-Za-z0-9_]*)");
    }
    if (!reservedAllowed && reserved(name)) {
      return Optional.of(RESERVED_REASON);
    }
    return valueDropReason(value);
  }

  private static Optional<String> valueDropReason(String value) {
    if (value == null) {
      return Optional.of("the value is missing");
    }
    if (value.indexOf('\0') >= 0) {
      return Optional.of("the value contains a NUL character");
    }
    if (value.length() > MAX_VALUE_LENGTH) {
      return Optional.of(
          "the value is longer than " + MAX_VALUE_LENGTH + " characters (" + value.length() + ")");
    }
    return Optional.empty();
  }

  /**
   * Why an entry of a device's own env never reaches a container, if it does not: as {@link
   * #dropReason} with reserved names refused, but the name may also hold {@code -} and {@code .}
   * (any name Kubernetes accepts, {@link Names#isContainerEnvName}).
   */
  public static Optional<String> deviceEnvDropReason(String name, String value) {
    if (name == null || name.length() > MAX_NAME_LENGTH) {
      return Optional.of("the name is longer than " + MAX_NAME_LENGTH + " characters");
    }
    if (!Names.isContainerEnvName(name)) {
      return Optional.of(
          "the name is not an env var name Kubernetes accepts ([-._A-Za-z][-._A-Za-z0-9]*)");
    }
    if (reserved(name)) {
      return Optional.of(RESERVED_REASON);
    }
    return valueDropReason(value);
  }

  /**
   * The entries of a device's own env that reach a container (see {@link #deviceEnvDropReason}), at
   * most {@link #MAX_PROPERTIES}, in name order.
   */
  public static Map<String, String> deviceEnv(Map<String, String> env) {
    Map<String, String> kept = new TreeMap<>();
    for (Map.Entry<String, String> e : new TreeMap<>(env).entrySet()) {
      if (kept.size() >= MAX_PROPERTIES) {
        break;
      }
      if (deviceEnvDropReason(e.getKey(), e.getValue()).isEmpty()) {
        kept.put(e.getKey(), e.getValue());
      }
    }
    return kept;
  }

  /**
   * The brokerProperties entries that never reach a container, one message each naming the entry
   * and the rule (reserved names are allowed here: whether they are is the agent's policy).
   */
  public static List<String> brokerPropertyDrops(Map<String, String> brokerProperties) {
    List<String> messages = new java.util.ArrayList<>();
    for (Map.Entry<String, String> e : new TreeMap<>(brokerProperties).entrySet()) {
      dropReason(e.getKey(), e.getValue(), true)
          .ifPresent(
              reason ->
                  messages.add(
                      "spec.brokerProperties."
                          + io.jakri.logging.LogText.quote(shortened(e.getKey()))
                          + " is not given to containers: "
                          + reason));
    }
    return messages;
  }

  private static String shortened(String name) {
    return name.length() <= 80 ? name : name.substring(0, 80) + "...";
  }

  /**
   * The properties a container may see for one device: valid, non-reserved device properties merged
   * with valid Configuration brokerProperties (which win on a clash), in name order.
   */
  public static Map<String, String> mergedProperties(
      Map<String, String> deviceProperties, Map<String, String> brokerProperties) {
    Map<String, String> merged = new TreeMap<>();
    int taken = 0;
    for (Map.Entry<String, String> e : new TreeMap<>(deviceProperties).entrySet()) {
      if (taken >= MAX_PROPERTIES) {
        break;
      }
      if (validName(e.getKey()) && !reserved(e.getKey()) && validValue(e.getValue())) {
        merged.put(e.getKey(), e.getValue());
        taken++;
      }
    }
    for (Map.Entry<String, String> e : brokerProperties.entrySet()) {
      if (validName(e.getKey()) && validValue(e.getValue())) {
        merged.put(e.getKey(), e.getValue());
      }
    }
    return merged;
  }

  /** Env for an allocation of the Instance resource: {@code K} and {@code K_<H>}. */
  public static Map<String, String> forInstance(String hash, Map<String, String> properties) {
    String suffix = "_" + hash.toUpperCase(Locale.ROOT);
    Map<String, String> env = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : properties.entrySet()) {
      env.put(e.getKey(), e.getValue());
      String hashed = e.getKey() + suffix;
      if (validName(hashed)) {
        env.put(hashed, e.getValue());
      }
    }
    return env;
  }

  /**
   * The env prefix of a class resource: {@code example.com/widget} gives {@code EXAMPLECOM_WIDGET}.
   */
  public static String prefix(String resourceName) {
    return resourceName
        .toUpperCase(Locale.ROOT)
        .replace(".", "")
        .replace('/', '_')
        .replace('-', '_');
  }

  /**
   * Env for an allocation of {@code devices.size()} devices of a class resource, the devices
   * ordered by slot id, each given as its merged properties.
   */
  public static Map<String, String> forClass(
      String resourceName, List<Map<String, String>> devices) {
    String p = prefix(resourceName);
    Map<String, String> env = new LinkedHashMap<>();
    for (int i = 0; i < devices.size(); i++) {
      for (Map.Entry<String, String> e : devices.get(i).entrySet()) {
        String name = p + "_DEV" + i + "_" + e.getKey();
        if (validName(name)) {
          env.put(name, e.getValue());
        }
        if (i == 0 && validName(p + "_" + e.getKey())) {
          env.put(p + "_" + e.getKey(), e.getValue());
        }
      }
    }
    // Last, so that no device property can overwrite the count.
    env.put(p + "_NUM_DEVICES", Integer.toString(devices.size()));
    return env;
  }
}
