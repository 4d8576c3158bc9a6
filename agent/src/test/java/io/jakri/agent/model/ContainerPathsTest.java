package io.jakri.agent.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.DiscoveredDevice.DeviceSpec;
import io.jakri.handler.DiscoveredDevice.Mount;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The rules of {@link ContainerPaths}, case by case: hostile entries and the rule each breaks. */
class ContainerPathsTest {

  private static final ContainerPaths RULES = ContainerPaths.DEFAULT;

  static Stream<Arguments> hostileMounts() {
    return Stream.of(
        Arguments.of(new Mount("/etc", "/", false), "container's /etc"),
        Arguments.of(new Mount("/host", "/", false), "host's root"),
        Arguments.of(new Mount("/shadow", "/etc/../etc/shadow", true), "\"..\" segment"),
        Arguments.of(new Mount("/x", "/opt/../etc", true), "\"..\" segment"),
        Arguments.of(new Mount("/x/../etc", "/opt/x", true), "container path has a \"..\""),
        Arguments.of(new Mount("/x", "etc/passwd", true), "host path is not absolute"),
        Arguments.of(new Mount("x", "/opt/x", true), "container path is not absolute"),
        Arguments.of(new Mount("/x", "", true), "host path is empty"),
        Arguments.of(new Mount("", "/opt/x", true), "container path is empty"),
        Arguments.of(new Mount("/x", "/opt/a\0b", true), "NUL"),
        Arguments.of(new Mount("/x\0", "/opt/a", true), "NUL"),
        Arguments.of(new Mount("/x", "/opt/a\nb", true), "control character"),
        Arguments.of(new Mount("/x", "/opt//a", true), "not normalised"),
        Arguments.of(new Mount("/x", "/opt/./a", true), "not normalised"),
        Arguments.of(new Mount("/x", "/opt/a/", true), "not normalised"),
        Arguments.of(new Mount("/x", "/" + "a".repeat(4096), true), "longer than 4096"),
        Arguments.of(new Mount("/x", "/etc", true), "inside the host's /etc"),
        Arguments.of(new Mount("/x", "/etc/shadow", true), "inside the host's /etc"),
        Arguments.of(new Mount("/x", "/proc/1/root", true), "inside the host's /proc"),
        Arguments.of(new Mount("/x", "/sys/kernel", true), "inside the host's /sys"),
        Arguments.of(new Mount("/x", "/boot", true), "inside the host's /boot"),
        Arguments.of(new Mount("/x", "/usr/bin", true), "inside the host's /usr"),
        Arguments.of(new Mount("/x", "/bin", true), "inside the host's /bin"),
        Arguments.of(new Mount("/x", "/sbin", true), "inside the host's /sbin"),
        Arguments.of(new Mount("/x", "/lib64", true), "inside the host's /lib64"),
        Arguments.of(new Mount("/x", "/root/.ssh", true), "inside the host's /root"),
        Arguments.of(
            new Mount("/x", "/var/lib/kubelet", true), "inside the host's /var/lib/kubelet"),
        Arguments.of(
            new Mount("/x", "/var/lib/kubelet/pods/uid/volumes", true),
            "inside the host's /var/lib/kubelet"),
        Arguments.of(new Mount("/x", "/var/lib", true), "contains the host's /var/lib/akri"),
        Arguments.of(new Mount("/x", "/var", true), "contains the host's /var/lib/akri"),
        Arguments.of(
            new Mount("/x", "/run/containerd/containerd.sock", false), "inside the host's /run"),
        Arguments.of(new Mount("/x", "/var/run/docker.sock", false), "inside the host's /var/run"),
        Arguments.of(
            new Mount("/x", "/var/lib/akri/agent-registration.sock", false),
            "inside the host's /var/lib/akri"),
        Arguments.of(new Mount("/x", "/dev", false), "whole /dev"),
        Arguments.of(new Mount("/", "/opt/x", false), "container's root"),
        Arguments.of(new Mount("/proc", "/opt/x", false), "inside the container's /proc"),
        Arguments.of(
            new Mount("/proc/sys/kernel", "/opt/x", false), "inside the container's /proc"),
        Arguments.of(new Mount("/sys/fs", "/opt/x", false), "inside the container's /sys"),
        Arguments.of(new Mount("/dev", "/opt/x", false), "hide the container's /dev"),
        Arguments.of(new Mount("/usr", "/opt/x", false), "hide the container's /usr"),
        Arguments.of(new Mount("/lib", "/opt/x", false), "hide the container's /lib"),
        Arguments.of(new Mount("/bin", "/opt/x", false), "hide the container's /bin"),
        Arguments.of(new Mount("/var", "/opt/x", false), "hide the container's /var"),
        Arguments.of(
            new Mount("/var/run/secrets/kubernetes.io/serviceaccount", "/opt/x", false),
            "inside the container's /var/run/secrets"));
  }

  @ParameterizedTest
  @MethodSource
  void hostileMounts(Mount mount, String rule) {
    assertThat(RULES.mountProblem(mount)).get().asString().contains(rule);
  }

  static Stream<Arguments> hostileDeviceNodes() {
    return Stream.of(
        Arguments.of(new DeviceSpec("/dev/x", "/dev/../etc/passwd", "rw"), "\"..\" segment"),
        Arguments.of(new DeviceSpec("/dev/x", "/etc/passwd", "rw"), "not under /dev/"),
        Arguments.of(new DeviceSpec("/dev/x", "/dev", "rw"), "not under /dev/"),
        Arguments.of(new DeviceSpec("/dev/x", "/devices/x", "rw"), "not under /dev/"),
        Arguments.of(new DeviceSpec("/dev/x", "dev/x", "rw"), "host path is not absolute"),
        Arguments.of(new DeviceSpec("", "/dev/x", "rw"), "container path is empty"),
        Arguments.of(new DeviceSpec("/dev/x", "", "rw"), "host path is empty"),
        Arguments.of(new DeviceSpec("/dev/x", "/dev/x\0", "rw"), "NUL"),
        Arguments.of(new DeviceSpec("/dev/x", "/dev/x", "rwxz"), "not r, w, m"),
        Arguments.of(new DeviceSpec("/dev/x", "/dev/x", "wr"), "in that order"),
        Arguments.of(new DeviceSpec("/dev/x", "/dev/x", "rrw"), "each once"),
        Arguments.of(new DeviceSpec("/dev/x", "/dev/x", "RW"), "not r, w, m"),
        Arguments.of(new DeviceSpec("/dev/x", "/dev/x", ""), "permissions are empty"),
        Arguments.of(new DeviceSpec("/dev/x", "/dev/x", null), "permissions are empty"),
        Arguments.of(new DeviceSpec("/dev", "/dev/x", "rw"), "hide the container's /dev"),
        Arguments.of(new DeviceSpec("/etc", "/dev/x", "rw"), "hide the container's /etc"),
        Arguments.of(new DeviceSpec("/", "/dev/x", "rw"), "container's root"),
        Arguments.of(
            new DeviceSpec("/proc/kcore", "/dev/x", "rw"), "inside the container's /proc"));
  }

  @ParameterizedTest
  @MethodSource
  void hostileDeviceNodes(DeviceSpec node, String rule) {
    assertThat(RULES.deviceNodeProblem(node)).get().asString().contains(rule);
  }

  @Test
  void ordinaryMountsAndDeviceNodesPass() {
    for (Mount m :
        List.of(
            new Mount("/data", "/opt/data", true),
            new Mount("/etc/app/config", "/srv/app/config", true),
            new Mount("/var/lib/app", "/mnt/disk", false),
            new Mount("/dev/bus/usb", "/dev/bus/usb", false),
            new Mount("/tmp/x", "/tmp/x", false),
            new Mount("/usr/local/share/model", "/opt/models", true),
            new Mount("/variable", "/runner", true),
            new Mount("/x", "/etcetera", true),
            new Mount("/x", "/var/lib/kubeletx", true))) {
      assertThat(RULES.mountProblem(m)).as("%s", m).isEmpty();
    }
    for (String permissions : List.of("r", "w", "m", "rw", "rm", "wm", "rwm")) {
      assertThat(RULES.deviceNodeProblem(new DeviceSpec("/dev/video0", "/dev/video0", permissions)))
          .isEmpty();
    }
    assertThat(RULES.deviceNodeProblem(new DeviceSpec("/dev/cam", "/dev/bus/usb/001/002", "r")))
        .isEmpty();
    assertThat(RULES.deviceNodeProblem(new DeviceSpec("/opt/dev/cam", "/dev/video1", "rw")))
        .isEmpty();
  }

  @Test
  void anOperatorsPrefixAllowsHostPathsInsideItAndNothingElse() {
    ContainerPaths allowing =
        new ContainerPaths(List.of("/var/lib/kubelet/plugins/gpu", "/etc/akri-certs"));
    assertThat(allowing.mountProblem(new Mount("/s", "/var/lib/kubelet/plugins/gpu", false)))
        .isEmpty();
    assertThat(allowing.mountProblem(new Mount("/s", "/var/lib/kubelet/plugins/gpu/a.sock", false)))
        .isEmpty();
    assertThat(allowing.mountProblem(new Mount("/certs", "/etc/akri-certs", true))).isEmpty();
    // whole segments only, and nothing outside the prefix
    assertThat(allowing.mountProblem(new Mount("/s", "/var/lib/kubelet/plugins/gpux", false)))
        .get()
        .asString()
        .contains("/var/lib/kubelet");
    assertThat(allowing.mountProblem(new Mount("/s", "/var/lib/kubelet", false))).isPresent();
    assertThat(allowing.mountProblem(new Mount("/s", "/etc/shadow", false))).isPresent();
    // the form and container rules still hold, and device nodes stay under /dev/
    assertThat(allowing.mountProblem(new Mount("/s", "/etc/akri-certs/../shadow", false)))
        .get()
        .asString()
        .contains("..");
    assertThat(allowing.mountProblem(new Mount("/etc", "/etc/akri-certs", false)))
        .get()
        .asString()
        .contains("container's /etc");
    assertThat(allowing.deviceNodeProblem(new DeviceSpec("/dev/c", "/etc/akri-certs/c", "r")))
        .get()
        .asString()
        .contains("/dev/");
  }

  @Test
  void anOperatorsPrefixMustBeAnAbsoluteNormalisedPath() {
    for (String bad : List.of("", "opt/x", "/opt/../etc", "/opt/x/", "/opt//x")) {
      assertThatThrownBy(() -> new ContainerPaths(List.of(bad)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("allowed host mount prefix");
    }
  }

  @Test
  void checkKeepsTheGoodEntriesAndListsTheRefusedOnesByKind() {
    DiscoveredDevice device =
        new DiscoveredDevice(
            "cam",
            Map.of("P", "1"),
            List.of(
                new Mount("/etc", "/", false),
                new Mount("/data", "/opt/data", true),
                new Mount("/x", "/var/lib/kubelet", false)),
            List.of(
                new DeviceSpec("/dev/x", "/dev/../etc/passwd", "rw"),
                new DeviceSpec("/dev/video0", "/dev/video0", "rw"),
                new DeviceSpec("/dev/y", "/dev/y", "rwxz")),
            Map.of("a", "b"),
            Optional.of("example.com/cam"),
            true,
            Map.of("E", "1"));

    ContainerPaths.Checked checked = RULES.check(device);

    assertThat(checked.device().mounts()).containsExactly(new Mount("/data", "/opt/data", true));
    assertThat(checked.device().deviceSpecs())
        .containsExactly(new DeviceSpec("/dev/video0", "/dev/video0", "rw"));
    assertThat(checked.device())
        .usingRecursiveComparison()
        .ignoringFields("mounts", "deviceSpecs")
        .isEqualTo(device);
    assertThat(checked.refused())
        .extracting(ContainerPaths.Refused::kind)
        .containsExactly(
            ContainerPaths.Kind.MOUNT,
            ContainerPaths.Kind.MOUNT,
            ContainerPaths.Kind.DEVICE_NODE,
            ContainerPaths.Kind.DEVICE_NODE);
    assertThat(checked.refused().get(0).describe())
        .isEqualTo(
            "mount \"/etc\" from host \"/\": the container path would hide the container's"
                + " /etc");
    // A device with nothing to refuse comes back as it is.
    DiscoveredDevice clean = DiscoveredDevice.of("ok", Map.of(), false);
    assertThat(RULES.check(clean).device()).isSameAs(clean);
    assertThat(RULES.check(clean).refused()).isEmpty();
  }

  @Test
  void aRefusalsLineIsBoundedAndEscaped() {
    String longPath = "/" + "a\n".repeat(3000);
    ContainerPaths.Refused refused =
        RULES
            .check(
                new DiscoveredDevice(
                    "d",
                    Map.of(),
                    List.of(new Mount(longPath, longPath, false)),
                    List.of(),
                    Map.of(),
                    Optional.empty(),
                    false))
            .refused()
            .get(0);
    assertThat(refused.describe()).hasSizeLessThan(400).doesNotContain("\n");
  }
}
