package io.jakri.handler.coap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LinkFormatTest {

  @Test
  void readsWhatLibcoapsServerSends() throws Exception {
    LinkFormat.Result r =
        LinkFormat.parse(
            "</>;title=\"General Info\";ct=0,</time>;if=\"clock\";rt=\"ticks\";"
                + "title=\"Internal Clock\";ct=0;obs,</async>;ct=0");
    assertThat(r.malformed()).isEmpty();
    assertThat(r.links()).extracting(Link::target).containsExactly("/", "/time", "/async");
    Link time = r.links().get(1);
    assertThat(time.resourceTypes()).containsExactly("ticks");
    assertThat(time.interfaces()).containsExactly("clock");
    assertThat(time.values("obs")).containsExactly("");
    assertThat(time.values("title")).containsExactly("Internal Clock");
  }

  @Test
  void rfc6690Example() throws Exception {
    LinkFormat.Result r =
        LinkFormat.parse(
            "</sensors/temp>;rt=\"temperature-c\";if=\"sensor\",\n"
                + "</sensors/light>;rt=\"light-lux core.s\";if=sensor;RT=extra");
    assertThat(r.links()).hasSize(2);
    assertThat(r.links().get(1).resourceTypes()).containsExactly("light-lux", "core.s", "extra");
    assertThat(r.links().get(1).interfaces()).containsExactly("sensor");
  }

  @Test
  void quotedStringsHoldCommasSemicolonsAndEscapes() throws Exception {
    LinkFormat.Result r =
        LinkFormat.parse("</a>;title=\"x, y; \\\"z\\\"\";rt=a,</b>;title=\"<,>\"");
    assertThat(r.malformed()).isEmpty();
    assertThat(r.links().get(0).values("title")).containsExactly("x, y; \"z\"");
    assertThat(r.links().get(1).values("title")).containsExactly("<,>");
  }

  @Test
  void emptyDocumentHasNoLinks() throws Exception {
    assertThat(LinkFormat.parse("").links()).isEmpty();
    assertThat(LinkFormat.parse("  \n").links()).isEmpty();
  }

  @Test
  void malformedLinksAreSkippedWithAReasonAndTheRestIsRead() throws Exception {
    LinkFormat.Result r =
        LinkFormat.parse(
            "/no-brackets;rt=x,</ok1>;rt=a,<no-close;rt=y,</bad>;=v,</ok2>,"
                + "</eq>;rt=,</junk> x,</ctl>;title=\"a\u0001\",</ok3>");
    assertThat(r.links()).extracting(Link::target).containsExactly("/ok1", "/ok2", "/ok3");
    assertThat(r.malformed())
        .hasSize(6)
        .anyMatch(m -> m.endsWith("does not start with '<'"))
        .anyMatch(m -> m.endsWith("target holds a character not allowed in a URI reference"))
        .anyMatch(m -> m.endsWith("a parameter without a name"))
        .anyMatch(m -> m.endsWith("'=' without a value"))
        .anyMatch(m -> m.endsWith("expected ';' or ',' after a parameter"))
        .anyMatch(m -> m.endsWith("a control character in a quoted string"));
  }

  @Test
  void unterminatedQuoteEndsTheDocument() throws Exception {
    LinkFormat.Result r = LinkFormat.parse("</ok>,</bad>;title=\"never closed, </x>");
    assertThat(r.links()).extracting(Link::target).containsExactly("/ok");
    assertThat(r.malformed()).singleElement().asString().endsWith("unterminated quoted string");
  }

  @Test
  void boundsAreEnforced() throws Exception {
    assertThatThrownBy(() -> LinkFormat.parse("</a>,".repeat(4000)))
        .isInstanceOf(LinkFormat.Rejected.class)
        .hasMessage("link format over 16384 bytes");
    LinkFormat.Result many = LinkFormat.parse("</a>,".repeat(1000));
    assertThat(many.links()).hasSize(LinkFormat.MAX_LINKS);
    assertThat(many.dropped()).isEqualTo(1000 - LinkFormat.MAX_LINKS);
    LinkFormat.Result params = LinkFormat.parse("</a>" + ";p".repeat(40) + ",</b>");
    assertThat(params.links()).extracting(Link::target).containsExactly("/b");
    assertThat(params.malformed()).singleElement().asString().endsWith("more than 32 parameters");
    LinkFormat.Result longValue = LinkFormat.parse("</a>;title=\"" + "x".repeat(300) + "\"");
    assertThat(longValue.links()).isEmpty();
    LinkFormat.Result longTarget = LinkFormat.parse("<" + "/x".repeat(200) + ">");
    assertThat(longTarget.malformed()).singleElement().asString().endsWith("over 256 characters");
  }

  @Test
  void rejectsBytesThatAreNotUtf8() {
    byte[] bad = {'<', '/', (byte) 0xff, '>'};
    assertThatThrownBy(() -> LinkFormat.parse(bad, bad.length))
        .hasMessage("link format is not UTF-8");
  }

  @Test
  void parsesUtf8Bytes() throws Exception {
    byte[] doc = "</a>;title=\"Grüße\"".getBytes(StandardCharsets.UTF_8);
    assertThat(LinkFormat.parse(doc, doc.length).links().get(0).params())
        .isEqualTo(Map.of("title", List.of("Grüße")));
  }

  @Test
  void filterKeepsByRtIfAndPaths() throws Exception {
    List<Link> links =
        LinkFormat.parse(
                "</s/temp>;rt=temp;if=sensor,</s/debug>;rt=temp;if=sensor,</a>;rt=x,</s/hum>;if=actuator")
            .links();
    LinkFilter f =
        new LinkFilter(List.of("temp"), List.of("sensor"), List.of("/s/*"), List.of("/s/debug"));
    assertThat(links.stream().filter(f::keeps).map(Link::target)).containsExactly("/s/temp");
    assertThat(links.stream().filter(LinkFilter.none()::keeps)).hasSize(4);
    LinkFilter byIf = new LinkFilter(List.of(), List.of("actuator"), List.of(), List.of());
    assertThat(links.stream().filter(byIf::keeps).map(Link::target)).containsExactly("/s/hum");
  }
}
