package io.jakri.handler.onvif;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

/** The hardened parser against the classic XML attacks, each refused with one short line. */
class XmlTest {

  private static Document parse(String xml) throws Xml.Rejected {
    byte[] b = xml.getBytes(StandardCharsets.UTF_8);
    return Xml.parse(b, b.length, 1 << 20);
  }

  @Test
  void externalEntityIsRefusedAndNothingIsRead(@TempDir Path dir) throws Exception {
    Path secret = dir.resolve("secret");
    Files.writeString(secret, "TOP-SECRET");
    String xxe =
        "<?xml version=\"1.0\"?><!DOCTYPE e [<!ENTITY x SYSTEM \""
            + secret.toUri()
            + "\">]><e>&x;</e>";
    assertThatThrownBy(() -> parse(xxe))
        .isInstanceOf(Xml.Rejected.class)
        .hasMessageStartingWith("malformed or forbidden XML: DOCTYPE is disallowed")
        .hasMessageNotContaining("TOP-SECRET");
  }

  @Test
  void entityExpansionIsRefused() {
    StringBuilder laughs = new StringBuilder("<!DOCTYPE l [<!ENTITY a \"lol\">");
    for (char c = 'b'; c <= 'j'; c++) {
      laughs
          .append("<!ENTITY ")
          .append(c)
          .append(" \"")
          .append(("&" + (char) (c - 1) + ";").repeat(10))
          .append("\">");
    }
    laughs.append("]><l>&j;</l>");
    assertThatThrownBy(() -> parse(laughs.toString()))
        .hasMessageContaining("DOCTYPE is disallowed");
  }

  @Test
  void externalDtdIsRefused() {
    assertThatThrownBy(() -> parse("<!DOCTYPE e SYSTEM \"http://127.0.0.1:9/x.dtd\"><e/>"))
        .hasMessageContaining("DOCTYPE is disallowed");
  }

  @Test
  void tenMegabytesAreRefusedBeforeParsing() {
    byte[] big = new byte[10 * 1024 * 1024];
    assertThatThrownBy(() -> Xml.parse(big, big.length, 1 << 20))
        .hasMessage("document of 10485760 bytes is larger than 1048576");
  }

  @Test
  void deepNestingIsRefusedAndModerateNestingIsFine() throws Exception {
    String deep = "<a>".repeat(100_000) + "</a>".repeat(100_000);
    assertThatThrownBy(
            () -> Xml.parse(deep.getBytes(StandardCharsets.UTF_8), deep.length(), 1 << 20))
        .isInstanceOf(Xml.Rejected.class)
        .hasMessageContaining("maxElementDepth");
    String ok = "<a>".repeat(Xml.MAX_DEPTH) + "</a>".repeat(Xml.MAX_DEPTH);
    assertThat(parse(ok).getDocumentElement().getLocalName()).isEqualTo("a");
  }

  @Test
  void malformedInputIsRefused() {
    assertThatThrownBy(() -> parse("<a><b></a>")).isInstanceOf(Xml.Rejected.class);
    assertThatThrownBy(() -> parse("\u0000\u0001")).isInstanceOf(Xml.Rejected.class);
    assertThatThrownBy(() -> parse("")).isInstanceOf(Xml.Rejected.class);
  }

  @Test
  void xincludeIsNotProcessed() throws Exception {
    Document doc =
        parse(
            "<a xmlns:xi=\"http://www.w3.org/2001/XInclude\"><xi:include href=\"file:///etc/passwd\""
                + " parse=\"text\"/></a>");
    assertThat(doc.getDocumentElement().getTextContent()).isEmpty();
  }
}
