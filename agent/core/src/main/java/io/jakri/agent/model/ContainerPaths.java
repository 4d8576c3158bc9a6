package io.jakri.agent.model;

import io.jakri.handler.DiscoveredDevice;
import io.jakri.logging.LogText;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The rules every handler's mounts and device nodes meet before any container gets them (the
 * Allocate answer and the CDI spec alike; SECURITY.md lists them for operators):
 *
 * <ul>
 *   <li>host and container paths are absolute and normalised: not empty, no {@code .}, {@code ..}
 *       or empty segments, no trailing {@code /}, no NUL or other control character, at most
 *       {@value #MAX_PATH_LENGTH} characters;
 *   <li>a device node's host path is under {@code /dev/};
 *   <li>a device node's permissions are one of {@link #PERMISSIONS} (Akri's udev rule: letters of
 *       {@code rwm} in that order); empty permissions are refused, since runtimes read them
 *       differently (the kubelet passes them on unchanged; CDI grants {@code rwm}, runc's cgroup
 *       filter nothing), so no output could keep their meaning;
 *   <li>a mount's host path is not one of {@link #PROTECTED_HOST_PATHS}, inside one, nor a parent
 *       of one (so never {@code /}), nor the host's whole {@code /dev}, unless it is inside one of
 *       {@link #allowedHostPrefixes} (the operator's {@code --allow-host-mount-prefix});
 *   <li>a container path is not one of {@link #PROTECTED_CONTAINER_PATHS} nor a parent of one (so
 *       never {@code /}), and not inside {@link #PROTECTED_CONTAINER_TREES}.
 * </ul>
 *
 * <p>Paths are compared as text after the form check; symbolic links on the host are not resolved
 * (the agent does not see the host's file system). A value; thread-safe.
 *
 * @param allowedHostPrefixes host path prefixes (absolute, normalised) inside which a mount's host
 *     path may be a protected one; matched on whole segments ({@code /opt/x} allows {@code /opt/x}
 *     and {@code /opt/x/y}, not {@code /opt/xy})
 */
public record ContainerPaths(List<String> allowedHostPrefixes) {

  /** Longest path taken (Linux's PATH_MAX). */
  public static final int MAX_PATH_LENGTH = 4096;

  /** The cgroup device permissions a device node may carry. */
  public static final Set<String> PERMISSIONS = Set.of("r", "w", "m", "rw", "rm", "wm", "rwm");

  /**
   * Host directories no mount may be, be inside or contain: the system's programs, libraries and
   * configuration, the kernel's interfaces, root's home, the runtime sockets ({@code /run}, {@code
   * /var/run}), the kubelet's and the container runtimes' state, and Akri's registration directory.
   */
  public static final List<String> PROTECTED_HOST_PATHS =
      List.of(
          "/bin",
          "/boot",
          "/etc",
          "/lib",
          "/lib32",
          "/lib64",
          "/libx32",
          "/proc",
          "/root",
          "/run",
          "/sbin",
          "/sys",
          "/usr",
          "/var/lib/akri",
          "/var/lib/containerd",
          "/var/lib/docker",
          "/var/lib/kubelet",
          "/var/run");

  /** Container paths no mount or device node may be or contain (it would hide the image's). */
  public static final List<String> PROTECTED_CONTAINER_PATHS =
      List.of(
          "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/root",
          "/run", "/sbin", "/sys", "/usr", "/var");

  /**
   * Container directories nothing may be put inside: the kernel's interfaces and the service
   * account token Kubernetes mounts.
   */
  public static final List<String> PROTECTED_CONTAINER_TREES =
      List.of("/proc", "/sys", "/run/secrets", "/var/run/secrets");

  /** No operator exceptions. */
  public static final ContainerPaths DEFAULT = new ContainerPaths(List.of());

  /** What kind of entry a refusal is about; {@link #label} is the metric's tag value. */
  public enum Kind {
    MOUNT("mount"),
    DEVICE_NODE("device");

    private final String label;

    Kind(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }
  }

  /**
   * One mount or device node refused.
   *
   * @param reason the rule it broke, naming the offending path (shortened and escaped)
   */
  public record Refused(Kind kind, String containerPath, String hostPath, String reason) {

    /** One bounded line: the entry's paths (shortened, escaped) and the rule it broke. */
    public String describe() {
      return (kind == Kind.MOUNT ? "mount " : "device node ")
          + shown(containerPath)
          + " from host "
          + shown(hostPath)
          + ": "
          + reason;
    }
  }

  /**
   * A device with only the entries that passed, and those that did not.
   *
   * @param device the device, its refused mounts and device nodes left out (the same instance when
   *     none was refused)
   * @param refused the refused entries, mounts first, each in the handler's order
   */
  public record Checked(DiscoveredDevice device, List<Refused> refused) {
    public Checked {
      refused = List.copyOf(refused);
    }
  }

  public ContainerPaths {
    allowedHostPrefixes = List.copyOf(allowedHostPrefixes);
    for (String prefix : allowedHostPrefixes) {
      Optional<String> problem = formProblem(prefix);
      if (problem.isPresent()) {
        throw new IllegalArgumentException(
            "allowed host mount prefix " + shown(prefix) + " " + problem.get());
      }
    }
  }

  /** {@code device} with its mounts and device nodes held against the rules. */
  public Checked check(DiscoveredDevice device) {
    List<Refused> refused = new ArrayList<>();
    List<DiscoveredDevice.Mount> mounts = new ArrayList<>();
    for (DiscoveredDevice.Mount m : device.mounts()) {
      Optional<String> problem = mountProblem(m);
      if (problem.isPresent()) {
        refused.add(new Refused(Kind.MOUNT, m.containerPath(), m.hostPath(), problem.get()));
      } else {
        mounts.add(m);
      }
    }
    List<DiscoveredDevice.DeviceSpec> nodes = new ArrayList<>();
    for (DiscoveredDevice.DeviceSpec d : device.deviceSpecs()) {
      Optional<String> problem = deviceNodeProblem(d);
      if (problem.isPresent()) {
        refused.add(new Refused(Kind.DEVICE_NODE, d.containerPath(), d.hostPath(), problem.get()));
      } else {
        nodes.add(d);
      }
    }
    if (refused.isEmpty()) {
      return new Checked(device, List.of());
    }
    return new Checked(
        new DiscoveredDevice(
            device.id(),
            device.properties(),
            mounts,
            nodes,
            device.annotations(),
            device.deviceClass(),
            device.shared(),
            device.env()),
        refused);
  }

  /** Why {@code mount} may not reach a container, if it may not. */
  public Optional<String> mountProblem(DiscoveredDevice.Mount mount) {
    return formProblem("the container path", mount.containerPath())
        .or(() -> formProblem("the host path", mount.hostPath()))
        .or(() -> containerPathProblem(mount.containerPath()))
        .or(() -> hostPathProblem(mount.hostPath()));
  }

  /** Why {@code node} may not reach a container, if it may not. */
  public Optional<String> deviceNodeProblem(DiscoveredDevice.DeviceSpec node) {
    return formProblem("the container path", node.containerPath())
        .or(() -> formProblem("the host path", node.hostPath()))
        .or(() -> containerPathProblem(node.containerPath()))
        .or(
            () ->
                node.hostPath().startsWith("/dev/")
                    ? Optional.empty()
                    : Optional.of("the host path is not under /dev/"))
        .or(() -> permissionsProblem(node.permissions()));
  }

  /**
   * Why {@code path} is not an absolute, normalised path of at most {@value #MAX_PATH_LENGTH}
   * characters without control characters, if it is not; as "is ..." or "has ...".
   */
  public static Optional<String> formProblem(String path) {
    if (path == null || path.isEmpty()) {
      return Optional.of("is empty");
    }
    if (path.length() > MAX_PATH_LENGTH) {
      return Optional.of("is longer than " + MAX_PATH_LENGTH + " characters");
    }
    for (int i = 0; i < path.length(); i++) {
      char c = path.charAt(i);
      if (c == '\0') {
        return Optional.of("contains a NUL character");
      }
      if (c < 0x20 || c == 0x7f) {
        return Optional.of("contains a control character");
      }
    }
    if (path.charAt(0) != '/') {
      return Optional.of("is not absolute");
    }
    if (path.equals("/")) {
      return Optional.empty();
    }
    // After the leading '/', every segment must be a name: not empty (// or a trailing /), and
    // neither "." nor "..".
    for (String segment : path.substring(1).split("/", -1)) {
      if (segment.equals("..")) {
        return Optional.of("has a \"..\" segment");
      }
      if (segment.isEmpty() || segment.equals(".")) {
        return Optional.of("is not normalised (an empty or \".\" segment)");
      }
    }
    return Optional.empty();
  }

  /**
   * Why {@code permissions} are not cgroup device permissions every runtime reads alike, if they
   * are not.
   */
  public static Optional<String> permissionsProblem(String permissions) {
    if (permissions == null || permissions.isEmpty()) {
      return Optional.of(
          "the permissions are empty (runtimes differ on what that grants); give r, w, m, rw, rm,"
              + " wm or rwm");
    }
    if (!PERMISSIONS.contains(permissions)) {
      return Optional.of(
          "the permissions "
              + shown(permissions)
              + " are not r, w, m, rw, rm, wm or rwm (letters of rwm, each once, in that order)");
    }
    return Optional.empty();
  }

  private static Optional<String> formProblem(String which, String path) {
    return formProblem(path).map(p -> which + " " + p);
  }

  private static Optional<String> containerPathProblem(String path) {
    for (String tree : PROTECTED_CONTAINER_TREES) {
      if (inside(path, tree)) {
        return Optional.of("the container path is inside the container's " + tree);
      }
    }
    if (path.equals("/")) {
      return Optional.of("the container path is the container's root");
    }
    for (String system : PROTECTED_CONTAINER_PATHS) {
      if (path.equals(system)) {
        return Optional.of("the container path would hide the container's " + system);
      }
      if (inside(system, path)) {
        return Optional.of(
            "the container path contains the container's " + system + " (would hide it)");
      }
    }
    return Optional.empty();
  }

  private Optional<String> hostPathProblem(String path) {
    for (String prefix : allowedHostPrefixes) {
      if (inside(path, prefix)) {
        return Optional.empty();
      }
    }
    if (path.equals("/")) {
      return Optional.of("the host path is the host's root");
    }
    if (path.equals("/dev")) {
      return Optional.of("the host path is the host's whole /dev (give device nodes one by one)");
    }
    for (String system : PROTECTED_HOST_PATHS) {
      if (inside(path, system)) {
        return Optional.of(
            "the host path is inside the host's "
                + system
                + " (an operator may allow it with --allow-host-mount-prefix)");
      }
      if (inside(system, path)) {
        return Optional.of("the host path contains the host's " + system);
      }
    }
    return Optional.empty();
  }

  /** Whether {@code path} is {@code dir} or inside it, on whole segments. */
  private static boolean inside(String path, String dir) {
    return dir.equals("/")
        || path.equals(dir)
        || (path.startsWith(dir) && path.charAt(dir.length()) == '/');
  }

  private static String shown(String text) {
    if (text == null) {
      return "\"\"";
    }
    return LogText.quote(text.length() <= 80 ? text : text.substring(0, 80) + "...");
  }
}
