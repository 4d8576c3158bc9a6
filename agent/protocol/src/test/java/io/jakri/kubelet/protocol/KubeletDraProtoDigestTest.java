package io.jakri.kubelet.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * The kubelet's DRA and plugin-registration protos are kept byte for byte: their SHA-256 digests
 * are the ones of the files in kubernetes/kubelet (the staging copy of kubernetes/kubernetes'
 * {@code staging/src/k8s.io/kubelet}) at commit {@code 63b3249724f7d89a8aa48f9acb3811f193c9aa68},
 * recorded here. They keep their upstream paths under {@code src/main/proto}.
 */
class KubeletDraProtoDigestTest {

  static final String UPSTREAM_COMMIT = "63b3249724f7d89a8aa48f9acb3811f193c9aa68";

  static final Path ROOT = Path.of("src/main/proto/k8s.io/kubelet/pkg/apis");

  @Test
  void draV1ProtoIsUpstreamByteForByte() throws Exception {
    assertThat(sha256(ROOT.resolve("dra/v1/api.proto")))
        .isEqualTo("b3066ad7f6abcfd0003c47b06ceb801d76997d78d6be505597478d3905b9cc57");
  }

  @Test
  void draV1beta1ProtoIsUpstreamByteForByte() throws Exception {
    assertThat(sha256(ROOT.resolve("dra/v1beta1/api.proto")))
        .isEqualTo("7900b11793ad897d0375d67b3bbae675869b574e21dfb1bf5334cc1556138c42");
  }

  @Test
  void pluginRegistrationV1ProtoIsUpstreamByteForByte() throws Exception {
    assertThat(sha256(ROOT.resolve("pluginregistration/v1/api.proto")))
        .isEqualTo("7a67a0000a1a167c155286834bc9ccb489f8bcdb394e006daba270189c272afa");
  }

  @Test
  void compiledServicesHaveTheKubeletsFullNames() {
    assertThat(k8s.io.kubelet.pkg.apis.dra.v1.DRAPluginGrpc.SERVICE_NAME)
        .isEqualTo("k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin");
    assertThat(k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPluginGrpc.SERVICE_NAME)
        .isEqualTo("k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin");
    assertThat(pluginregistration.RegistrationGrpc.SERVICE_NAME)
        .isEqualTo("pluginregistration.Registration");
  }

  static String sha256(Path file) throws Exception {
    byte[] bytes = Files.readAllBytes(file);
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
  }
}
