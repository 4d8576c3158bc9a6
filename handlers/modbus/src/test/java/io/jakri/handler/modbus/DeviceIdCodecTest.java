package io.jakri.handler.modbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jakri.handler.modbus.DeviceIdCodec.ExceptionReply;
import io.jakri.handler.modbus.DeviceIdCodec.Frame;
import io.jakri.handler.modbus.DeviceIdCodec.MalformedFrameException;
import io.jakri.handler.modbus.DeviceIdCodec.Page;
import io.jakri.handler.modbus.DeviceIdCodec.ReadCode;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DeviceIdCodecTest {

  /** A reply PDU: header fields then (id, value) objects. */
  static byte[] page(int code, int more, int next, Object... objects) {
    ByteArrayOutputStream pdu = new ByteArrayOutputStream();
    pdu.write(0x2B);
    pdu.write(0x0E);
    pdu.write(code);
    pdu.write(0x81);
    pdu.write(more);
    pdu.write(next);
    pdu.write(objects.length / 2);
    for (int i = 0; i < objects.length; i += 2) {
      byte[] value = ((String) objects[i + 1]).getBytes(StandardCharsets.ISO_8859_1);
      pdu.write((Integer) objects[i]);
      pdu.write(value.length);
      pdu.writeBytes(value);
    }
    return pdu.toByteArray();
  }

  /** An ADU around a PDU. */
  static byte[] adu(int transaction, int unit, byte[] pdu) {
    ByteBuffer b = ByteBuffer.allocate(7 + pdu.length);
    b.putShort((short) transaction).putShort((short) 0).putShort((short) (pdu.length + 1));
    b.put((byte) unit).put(pdu);
    return b.array();
  }

  @Test
  void requestIsTheElevenByteAduOfTheSpecification() {
    assertThat(DeviceIdCodec.request(0x1234, 255, ReadCode.REGULAR, 3))
        .containsExactly(0x12, 0x34, 0, 0, 0, 5, 0xFF, 0x2B, 0x0E, 2, 3);
  }

  @Test
  void validReplyGivesItsObjectsInOrder() throws Exception {
    Page page =
        (Page) DeviceIdCodec.reply(page(1, 0, 0, 0, "Acme", 1, "PC-1", 2, "1.0"), ReadCode.BASIC);
    assertThat(page.moreFollows()).isFalse();
    assertThat(page.conformity()).isEqualTo(0x81);
    assertThat(page.objects())
        .containsExactly(Map.entry(0, "Acme"), Map.entry(1, "PC-1"), Map.entry(2, "1.0"));
  }

  @Test
  void moreFollowsPageSaysWhichObjectComesNext() throws Exception {
    Page page =
        (Page) DeviceIdCodec.reply(page(2, 0xFF, 3, 0, "Acme", 1, "PC", 2, "1"), ReadCode.REGULAR);
    assertThat(page.moreFollows()).isTrue();
    assertThat(page.nextObjectId()).isEqualTo(3);
  }

  @Test
  void exceptionReplyGivesItsCode() throws Exception {
    assertThat(DeviceIdCodec.reply(new byte[] {(byte) 0xAB, 0x01}, ReadCode.BASIC))
        .isEqualTo(new ExceptionReply(1));
  }

  @Test
  void nonPrintableBytesBecomeQuestionMarks() throws Exception {
    Page page = (Page) DeviceIdCodec.reply(page(1, 0, 0, 0, "A\u0000c\u00ffe\n"), ReadCode.BASIC);
    assertThat(page.objects().get(0)).isEqualTo("A?c?e?");
  }

  @Test
  void malformedRepliesAreRefusedWithTheirReason() {
    assertMalformed(new byte[0], "empty PDU");
    assertMalformed(new byte[] {(byte) 0xAB}, "exception reply of 1 bytes");
    assertMalformed(new byte[] {(byte) 0xAB, 1, 2}, "exception reply of 3 bytes");
    assertMalformed(new byte[] {0x03, 2, 0, 0}, "function 0x03");
    assertMalformed(new byte[] {0x2B, 0x0E, 1, (byte) 0x81, 0}, "7 at least");
    byte[] wrongMei = page(1, 0, 0);
    wrongMei[1] = 0x0D;
    assertMalformed(wrongMei, "MEI type 0x0D");
    assertMalformed(page(2, 0, 0), "read device id code 2 to a request for 1");
    assertMalformed(page(1, 0x01, 0), "more follows is 0x01");
    byte[] truncated = page(1, 0, 0, 0, "Acme");
    assertMalformed(java.util.Arrays.copyOf(truncated, truncated.length - 2), "ends before");
    byte[] missingObject = page(1, 0, 0, 0, "Acme");
    missingObject[6] = 2;
    assertMalformed(missingObject, "object 2 of 2 is cut off");
    byte[] trailing =
        java.util.Arrays.copyOf(page(1, 0, 0, 0, "A"), page(1, 0, 0, 0, "A").length + 1);
    assertMalformed(trailing, "1 bytes after the last object");
    assertMalformed(page(1, 0, 0, 0, "A", 0, "B"), "appears twice");
  }

  private static void assertMalformed(byte[] pdu, String reason) {
    assertThatThrownBy(() -> DeviceIdCodec.reply(pdu, ReadCode.BASIC))
        .isInstanceOf(MalformedFrameException.class)
        .hasMessageContaining(reason);
  }

  @Test
  void frameWaitsForTheWholeAduThenTakesExactlyIt() throws Exception {
    byte[] one = adu(7, 1, new byte[] {(byte) 0xAB, 1});
    ByteBuffer in = ByteBuffer.allocate(260);
    in.put(one, 0, 8).flip();
    assertThat(DeviceIdCodec.nextFrame(in)).isEmpty();
    assertThat(in.position()).isZero();
    in.compact().put(one, 8, one.length - 8).put(new byte[] {1, 2}).flip();
    Frame frame = DeviceIdCodec.nextFrame(in).orElseThrow();
    assertThat(frame.transactionId()).isEqualTo(7);
    assertThat(frame.unitId()).isEqualTo(1);
    assertThat(frame.pdu()).containsExactly(0xAB, 1);
    assertThat(in.remaining()).isEqualTo(2);
  }

  @Test
  void oversizedOrForeignHeadersAreRefusedBeforeTheirBody() {
    ByteBuffer oversized = ByteBuffer.wrap(new byte[] {0, 1, 0, 0, (byte) 0xFF, (byte) 0xFF, 1});
    assertThatThrownBy(() -> DeviceIdCodec.nextFrame(oversized))
        .hasMessageContaining("MBAP length 65535 is outside 2..254");
    ByteBuffer tooShort = ByteBuffer.wrap(new byte[] {0, 1, 0, 0, 0, 1, 1});
    assertThatThrownBy(() -> DeviceIdCodec.nextFrame(tooShort))
        .hasMessageContaining("MBAP length 1");
    ByteBuffer http = ByteBuffer.wrap("HTTP/1.1 400".getBytes(StandardCharsets.US_ASCII));
    assertThatThrownBy(() -> DeviceIdCodec.nextFrame(http)).hasMessageContaining("is not Modbus");
  }
}
