package io.jakri.kubelet.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import v0.Discovery;

/**
 * Akri's {@code discovery.proto} is kept byte for byte: its SHA-256 is the one of the file in
 * project-akri/akri ({@code discovery-utils/proto/discovery.proto}), recorded here.
 */
class AkriProtoDigestTest {

  /** SHA-256 of Akri's {@code discovery-utils/proto/discovery.proto}. */
  static final String AKRI_DIGEST =
      "761cb4fca426999e608fbacf122498e1bfea2630bf6b17e1880de4ba8204e145";

  @Test
  void discoveryProtoIsAkrisByteForByte() throws Exception {
    byte[] bytes = Files.readAllBytes(Path.of("src/main/proto/discovery.proto"));
    String digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    assertThat(digest).isEqualTo(AKRI_DIGEST);
  }

  @Test
  void compiledDescriptorIsPackageV0WithAkrisServices() {
    assertThat(Discovery.getDescriptor().getPackage()).isEqualTo("v0");
    assertThat(Discovery.getDescriptor().getServices())
        .extracting(s -> s.getName())
        .containsExactly("Registration", "DiscoveryHandler");
  }
}
