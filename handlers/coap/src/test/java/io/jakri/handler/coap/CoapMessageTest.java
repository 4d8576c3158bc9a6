package io.jakri.handler.coap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class CoapMessageTest {

  @Test
  void getOfWellKnownCoreIsEncodedAsRfc7252Says() {
    byte[] get = CoapMessage.get(0x1234, new byte[] {1, 2}, Optional.empty());
    // ver 1, NON, TKL 2 | GET | MID | token | Uri-Path(11) ".well-known" | Uri-Path(0) "core"
    assertThat(HexFormat.of().formatHex(get))
        .isEqualTo("520112340102bb2e77656c6c2d6b6e6f776e04636f7265");
  }

  @Test
  void block2IsAppended() throws Exception {
    byte[] get =
        CoapMessage.get(1, new byte[] {9}, Optional.of(new CoapMessage.Block(2, false, 6)));
    // Block2 option 23 after 11: delta 12, length 1, value (2<<4)|6 = 0x26
    assertThat(HexFormat.of().formatHex(get)).endsWith("04636f7265c126");
  }

  @Test
  void readsAResponse() throws Exception {
    // NON 2.05, MID 1, token 0xab, Content-Format 40, Block2 num 1 more szx 2, payload "</a>"
    byte[] d = HexFormat.of().parseHex("5145" + "0001" + "ab" + "c128" + "b11a" + "ff3c2f613e");
    CoapMessage m = CoapMessage.read(d, d.length);
    assertThat(m.code()).isEqualTo(CoapMessage.CONTENT);
    assertThat(m.token()).containsExactly(0xab);
    assertThat(m.contentFormat()).contains(40);
    assertThat(m.block2()).contains(new CoapMessage.Block(1, true, 2));
    assertThat(new String(m.payload())).isEqualTo("</a>");
  }

  @Test
  void refusesTruncatedAndInvalidDatagrams() {
    for (String hex :
        new String[] {
          "51", "9145000100", "5f45000100", "51450001" + "00ff", "5145000101dd", "514500ff"
        }) {
      byte[] d = HexFormat.of().parseHex(hex);
      assertThatThrownBy(() -> CoapMessage.read(d, d.length))
          .as(hex)
          .isInstanceOf(CoapMessage.Unreadable.class);
    }
  }

  @Test
  void codeText() {
    assertThat(CoapMessage.codeText(69)).isEqualTo("2.05");
    assertThat(CoapMessage.codeText(132)).isEqualTo("4.04");
  }
}
