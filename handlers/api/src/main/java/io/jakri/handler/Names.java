package io.jakri.handler;

import java.util.Optional;
import java.util.regex.Pattern;

/** Checks names that end up in Kubernetes objects or container environments. */
public final class Names {

  private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final Pattern CONTAINER_ENV_NAME = Pattern.compile("[-._A-Za-z][-._A-Za-z0-9]*");
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  private static final Pattern QUALIFIED_NAME =
      Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
  private static final int MAX_SUBDOMAIN = 253;
  private static final int MAX_NAME = 63;

  private Names() {}

  /** Whether {@code name} is a POSIX-style environment variable name. */
  public static boolean isEnvName(String name) {
    return ENV_NAME.matcher(name).matches();
  }

  /**
   * Whether {@code name} is an env var name Kubernetes accepts for a container ({@code
   * [-._A-Za-z][-._A-Za-z0-9]*}): a POSIX name, or one with {@code -} and {@code .} as in {@code
   * SIMPLE_DEVICE_simple-device-node-a-0}, which programs read from their environment though a
   * shell cannot name it.
   */
  public static boolean isContainerEnvName(String name) {
    return CONTAINER_ENV_NAME.matcher(name).matches();
  }

  /** Whether {@code name} is a lowercase RFC 1123 subdomain, as Kubernetes requires of prefixes. */
  public static boolean isDnsSubdomain(String name) {
    if (name.isEmpty() || name.length() > MAX_SUBDOMAIN) {
      return false;
    }
    for (String label : name.split("\\.", -1)) {
      if (!DNS_LABEL.matcher(label).matches()) {
        return false;
      }
    }
    return true;
  }

  /**
   * Why {@code name} is not a valid extended resource name ({@code <domain>/<name>}, not in the
   * {@code kubernetes.io} namespace), or empty when it is valid.
   */
  public static Optional<String> extendedResourceProblem(String name) {
    int slash = name.indexOf('/');
    if (slash < 0 || slash != name.lastIndexOf('/')) {
      return Optional.of("must have the form <domain>/<name> with exactly one '/'");
    }
    String prefix = name.substring(0, slash);
    String local = name.substring(slash + 1);
    if (!isDnsSubdomain(prefix)) {
      return Optional.of(
          "must start with a lowercase DNS subdomain (such as example.com) before the '/'");
    }
    // Kubernetes treats every name containing "kubernetes.io/" as a native resource.
    if (name.contains("kubernetes.io/")) {
      return Optional.of("must not be in the kubernetes.io namespace, which is reserved");
    }
    if (local.isEmpty() || local.length() > MAX_NAME) {
      return Optional.of("must have a name part of 1 to " + MAX_NAME + " characters after the '/'");
    }
    if (!QUALIFIED_NAME.matcher(local).matches()) {
      return Optional.of(
          "must have a name part of letters, digits, '-', '_' and '.', starting and ending with a"
              + " letter or digit");
    }
    return Optional.empty();
  }
}
