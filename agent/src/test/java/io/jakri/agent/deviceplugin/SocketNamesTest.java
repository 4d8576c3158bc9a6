package io.jakri.agent.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.deviceplugin.ResourceServer.SocketNames;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class SocketNamesTest {

  static final Path KUBELET_DIR = Path.of("/var/lib/kubelet/device-plugins");

  static int bytes(Path p) {
    return p.toString().getBytes(StandardCharsets.UTF_8).length;
  }

  @Test
  void aStemThatFitsIsKeptAsDesignSaysInstanceSocketsAreNamed() {
    assertThat(SocketNames.socket(KUBELET_DIR, "zeroconf-218f68", 1608227293L))
        .isEqualTo(KUBELET_DIR.resolve("zeroconf-218f68-1608227293.sock"));
  }

  @Test
  void aLongStemIsShortenedToFitWithAHashThatTellsLongStemsApart() {
    String a = "jakri-class-example.com_" + "a-very-long-class-name-".repeat(3) + "one";
    String b = "jakri-class-example.com_" + "a-very-long-class-name-".repeat(3) + "two";
    Path pa = SocketNames.socket(KUBELET_DIR, a, 1608227293L);
    Path pb = SocketNames.socket(KUBELET_DIR, b, 1608227293L);
    assertThat(bytes(pa)).isEqualTo(SocketNames.MAX_PATH_BYTES);
    assertThat(bytes(pb)).isEqualTo(SocketNames.MAX_PATH_BYTES);
    assertThat(pa).isNotEqualTo(pb);
    assertThat(pa.getParent()).isEqualTo(KUBELET_DIR);
    String name = pa.getFileName().toString();
    assertThat(name).startsWith("jakri-class-example.com_a-very").endsWith("-1608227293.sock");
    assertThat(name)
        .matches("[-a-z0-9._]+-[0-9a-f]{" + SocketNames.HASH_CHARS + "}-1608227293\\.sock");
    // The same stem always gets the same file name (a restarted agent finds its own).
    assertThat(SocketNames.socket(KUBELET_DIR, a, 1608227293L)).isEqualTo(pa);
  }

  @Test
  void multiByteCharactersAreNeverCutInHalf() {
    String stem = "jakri-class-example.com_" + "é".repeat(60);
    Path p = SocketNames.socket(KUBELET_DIR, stem, 1L);
    assertThat(bytes(p)).isLessThanOrEqualTo(SocketNames.MAX_PATH_BYTES);
    assertThat(p.getFileName().toString()).doesNotContain("\uFFFD");
    assertThat(new String(p.toString().getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8))
        .isEqualTo(p.toString());
  }

  @Test
  void aDirectoryTooLongForAnySocketStillGetsTheShortestName() {
    Path deep = Path.of("/" + "d".repeat(100));
    Path p = SocketNames.socket(deep, "zeroconf-218f68", 1608227293L);
    assertThat(p.getFileName().toString()).matches("z-[0-9a-f]{10}-1608227293\\.sock");
  }

  @Test
  void everySocketFitsInTheLongestDirectoryTooLongSaysIsFineAndNoneInALongerOne() {
    Path longest = Path.of("/" + "d".repeat(SocketNames.MAX_DIR_BYTES - 1));
    assertThat(bytes(longest)).isEqualTo(SocketNames.MAX_DIR_BYTES);
    assertThat(SocketNames.tooLong(longest)).isEmpty();
    String stem = "jakri-class-example.com_" + "a-long-class-name-".repeat(5);
    assertThat(bytes(SocketNames.socket(longest, stem, 9_999_999_999L)))
        .isLessThanOrEqualTo(SocketNames.MAX_PATH_BYTES);

    Path longer = Path.of("/" + "d".repeat(SocketNames.MAX_DIR_BYTES));
    assertThat(bytes(SocketNames.socket(longer, stem, 9_999_999_999L)))
        .isGreaterThan(SocketNames.MAX_PATH_BYTES);
    assertThat(SocketNames.tooLong(longer))
        .hasValueSatisfying(
            why ->
                assertThat(why)
                    .contains(longer.toString())
                    .contains((SocketNames.MAX_DIR_BYTES + 1) + " bytes long")
                    .contains("at most " + SocketNames.MAX_DIR_BYTES + " bytes"));
    assertThat(SocketNames.tooLong(KUBELET_DIR)).isEmpty();
  }
}
