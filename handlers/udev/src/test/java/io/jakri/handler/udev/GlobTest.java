package io.jakri.handler.udev;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GlobTest {

  @ParameterizedTest
  @CsvSource({
    "zram*, zram0, true",
    "zram*, zram, true",
    "zram*, xzram0, false",
    "video[0-9]*, video12, true",
    "video[0-9]*, videoX, false",
    "vd?, vda, true",
    "vd?, vda1, false",
    "*, '', true",
    "'', '', true",
    "'', a, false",
    "loop[!0-3], loop5, true",
    "loop[!0-3], loop2, false",
    "loop[^0-3], loop2, false",
    "[]a], ], true",
    "a\\*b, a*b, true",
    "a\\*b, axb, false",
    "a[, a[, true",
    "*/block/*, /devices/virtual/block/zram0, true",
    "[[:digit:]]x, 7x, true",
    "[[:alpha:]]x, 7x, false",
    "0x1af4, 0x1af4, true",
    "video*|vbi*, video0, false",
    "*a*a*a*a*a*b, aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, false"
  })
  void matchesLikeFnmatch(String pattern, String text, boolean expected) {
    assertThat(Glob.matches(pattern, text)).isEqualTo(expected);
  }
}
