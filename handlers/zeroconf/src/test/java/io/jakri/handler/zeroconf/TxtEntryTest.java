package io.jakri.handler.zeroconf;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class TxtEntryTest {

  /** TXT wire data: each string prefixed with its length. */
  static byte[] wire(String... strings) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (String s : strings) {
      byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
      out.write(bytes.length);
      out.write(bytes, 0, bytes.length);
    }
    return out.toByteArray();
  }

  @Test
  void decodesKeysAndValuesInWireOrder() {
    assertThat(TxtEntry.decode(wire("b=2", "a=1")))
        .containsExactly(TxtEntry.of("b", "2"), TxtEntry.of("a", "1"));
  }

  @Test
  void splitsAtTheFirstEqualsSign() {
    assertThat(TxtEntry.decode(wire("a=b=c"))).containsExactly(TxtEntry.of("a", "b=c"));
  }

  @Test
  void keyWithoutEqualsIsABooleanAttributeAndKeyWithEmptyValueIsEmpty() {
    assertThat(TxtEntry.decode(wire("flag", "empty=")))
        .containsExactly(new TxtEntry("flag", Optional.empty()), TxtEntry.of("empty", ""));
  }

  @Test
  void onlyTheFirstOccurrenceOfAKeyCountsIgnoringCase() {
    assertThat(TxtEntry.decode(wire("Path=/a", "PATH=/b", "path")))
        .containsExactly(TxtEntry.of("Path", "/a"));
  }

  @Test
  void stringsWithoutKeyAndEmptyStringsAreIgnored() {
    assertThat(TxtEntry.decode(wire("=nokey", "", "k=v"))).containsExactly(TxtEntry.of("k", "v"));
  }

  @Test
  void truncatedDataKeepsWhatCameBefore() {
    byte[] good = wire("a=1");
    byte[] data = new byte[good.length + 3];
    System.arraycopy(good, 0, data, 0, good.length);
    data[good.length] = 100; // claims 100 bytes, only 2 follow
    data[good.length + 1] = 'x';
    data[good.length + 2] = 'y';

    assertThat(TxtEntry.decode(data)).containsExactly(TxtEntry.of("a", "1"));
  }

  @Test
  void nullOrEmptyTxtHasNoEntries() {
    assertThat(TxtEntry.decode(null)).isEmpty();
    assertThat(TxtEntry.decode(new byte[] {0})).isEmpty();
    assertThat(TxtEntry.decode(new byte[0])).isEmpty();
  }

  @Test
  void decodesUtf8AndReplacesInvalidBytes() {
    byte[] data = {6, 'k', (byte) 0xC3, (byte) 0xA9, '=', (byte) 0xFF, 'v'};

    assertThat(TxtEntry.decode(data)).containsExactly(TxtEntry.of("ké", "\uFFFDv"));
  }
}
