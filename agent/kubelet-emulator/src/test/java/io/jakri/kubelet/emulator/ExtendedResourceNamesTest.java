package io.jakri.kubelet.emulator;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ExtendedResourceNamesTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "akri.sh/udev-video",
        "akri.sh/onvif-camera-8120fe",
        "example.com/Foo_Bar.baz",
        "a/b",
        "nvidia.com/gpu"
      })
  void acceptsExtendedResourceNames(String name) {
    assertThat(ExtendedResourceNames.isExtendedResourceName(name)).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "cpu",
        "kubernetes.io/foo",
        "x.kubernetes.io/foo",
        "requests.akri.sh/foo",
        "akri.sh/a/b",
        "Akri.sh/foo",
        "akri.sh/",
        "/foo",
        "akri.sh/.foo",
        "akri.sh/foo-",
        "-akri.sh/foo",
        "akri_sh/foo"
      })
  void rejectsOtherNames(String name) {
    assertThat(ExtendedResourceNames.isExtendedResourceName(name)).isFalse();
  }

  @org.junit.jupiter.api.Test
  void limitsTheNamePartTo63AndThePrefixSoThatRequestsDotPrefixFitsIn253() {
    assertThat(ExtendedResourceNames.isExtendedResourceName("akri.sh/" + "a".repeat(63))).isTrue();
    assertThat(ExtendedResourceNames.isExtendedResourceName("akri.sh/" + "a".repeat(64))).isFalse();
    String prefix244 =
        "a".repeat(60) + "." + "b".repeat(60) + "." + "c".repeat(60) + "." + "d".repeat(61);
    assertThat(prefix244).hasSize(244);
    assertThat(ExtendedResourceNames.isExtendedResourceName(prefix244 + "/x")).isTrue();
    assertThat(ExtendedResourceNames.isExtendedResourceName(prefix244 + "d/x")).isFalse();
  }
}
