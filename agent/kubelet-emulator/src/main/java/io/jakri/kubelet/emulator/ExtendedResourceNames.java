package io.jakri.kubelet.emulator;

import java.util.regex.Pattern;

/**
 * The kubelet's {@code IsExtendedResourceName}: not a native resource (must contain {@code /} and
 * must not contain {@code kubernetes.io/}), must not start with {@code requests.}, and {@code
 * "requests." + name} must be a qualified name: at most one {@code /}, a DNS-1123 subdomain prefix
 * (so the prefix itself may have at most 244 characters) and a name part of at most 63 characters.
 */
final class ExtendedResourceNames {
  private static final String QUOTA_PREFIX = "requests.";
  private static final Pattern DNS1123_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern QUALIFIED_NAME_PART =
      Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");

  private ExtendedResourceNames() {}

  static boolean isExtendedResourceName(String name) {
    if (!name.contains("/") || name.contains("kubernetes.io/") || name.startsWith(QUOTA_PREFIX)) {
      return false;
    }
    return isQualifiedName(QUOTA_PREFIX + name);
  }

  private static boolean isQualifiedName(String value) {
    String[] parts = value.split("/", -1);
    if (parts.length != 2) {
      return false;
    }
    String prefix = parts[0];
    String name = parts[1];
    if (prefix.isEmpty() || prefix.length() > 253 || !DNS1123_SUBDOMAIN.matcher(prefix).matches()) {
      return false;
    }
    return !name.isEmpty() && name.length() <= 63 && QUALIFIED_NAME_PART.matcher(name).matches();
  }
}
