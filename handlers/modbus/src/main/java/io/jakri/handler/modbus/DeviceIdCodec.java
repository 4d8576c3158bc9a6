package io.jakri.handler.modbus;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The one Modbus TCP exchange the handler makes: Read Device Identification (function 0x2B, MEI
 * type 0x0E), framed in MBAP. Pure, no I/O; every length from the network is checked against the
 * protocol's bounds before it is used, and a frame that breaks a rule is refused with {@link
 * MalformedFrameException}, never partly used.
 *
 * <p>MBAP header: transaction id (2), protocol id (2, always 0), length (2: unit id + PDU, so 3 to
 * 254 for a reply), unit id (1). Reply PDU: {@code 2B 0E code conformity moreFollows nextObjectId
 * count (id len value)*}; exception PDU: {@code AB exceptionCode}.
 */
final class DeviceIdCodec {

  static final int FUNCTION = 0x2B;
  static final int EXCEPTION_FUNCTION = FUNCTION | 0x80;
  static final int MEI_READ_DEVICE_ID = 0x0E;
  static final int HEADER_BYTES = 7;

  /** Largest Modbus TCP ADU: 7 header bytes and a PDU of at most 253 bytes. */
  static final int MAX_ADU_BYTES = 260;

  /** The read device id codes used: basic stream (objects 0 to 2) and regular (0 to 0x7F). */
  enum ReadCode {
    BASIC(1),
    REGULAR(2);

    final int code;

    ReadCode(int code) {
      this.code = code;
    }
  }

  /** A reply the peer may legitimately send. */
  sealed interface Reply permits Page, ExceptionReply {}

  /**
   * One page of identification objects.
   *
   * @param conformity the device's conformity level byte
   * @param moreFollows whether the objects go on in another page
   * @param nextObjectId the object to ask for next when {@code moreFollows}
   * @param objects object id to its value, in the order received
   */
  record Page(int conformity, boolean moreFollows, int nextObjectId, Map<Integer, String> objects)
      implements Reply {
    Page {
      objects = Collections.unmodifiableMap(new LinkedHashMap<>(objects));
    }
  }

  /**
   * A Modbus exception reply ({@code 0xAB code}).
   *
   * @param code 1 illegal function, 2 illegal data address, 3 illegal data value, 0x0A/0x0B gateway
   *     path unavailable / target failed to respond, and so on
   */
  record ExceptionReply(int code) implements Reply {}

  /** A complete frame's header and PDU (bounded by {@link #MAX_ADU_BYTES}). */
  record Frame(int transactionId, int unitId, byte[] pdu) {
    Frame {
      pdu = pdu.clone();
    }
  }

  /** A frame or reply that breaks the protocol; the connection it came from is dropped. */
  static final class MalformedFrameException extends Exception {
    private static final long serialVersionUID = 1L;

    MalformedFrameException(String message) {
      super(message);
    }
  }

  private DeviceIdCodec() {}

  /** The 11-byte request ADU. */
  static byte[] request(int transactionId, int unitId, ReadCode code, int objectId) {
    ByteBuffer b = ByteBuffer.allocate(11);
    b.putShort((short) transactionId);
    b.putShort((short) 0);
    b.putShort((short) 5);
    b.put((byte) unitId);
    b.put((byte) FUNCTION);
    b.put((byte) MEI_READ_DEVICE_ID);
    b.put((byte) code.code);
    b.put((byte) objectId);
    return b.array();
  }

  /**
   * Takes one frame from the start of {@code in} (in read mode) if it is all there; checks the
   * header first, so a bad length is refused before waiting for bytes that would never fit.
   *
   * @return the frame (consumed from {@code in}), or empty when more bytes are needed
   */
  static Optional<Frame> nextFrame(ByteBuffer in) throws MalformedFrameException {
    if (in.remaining() < HEADER_BYTES) {
      return Optional.empty();
    }
    int start = in.position();
    int transaction = Short.toUnsignedInt(in.getShort(start));
    int protocol = Short.toUnsignedInt(in.getShort(start + 2));
    int length = Short.toUnsignedInt(in.getShort(start + 4));
    if (protocol != 0) {
      throw new MalformedFrameException("MBAP protocol id " + protocol + " is not Modbus (0)");
    }
    if (length < 2 || length > MAX_ADU_BYTES - 6) {
      throw new MalformedFrameException(
          "MBAP length " + length + " is outside 2.." + (MAX_ADU_BYTES - 6));
    }
    if (in.remaining() < 6 + length) {
      return Optional.empty();
    }
    int unit = Byte.toUnsignedInt(in.get(start + 6));
    byte[] pdu = new byte[length - 1];
    in.position(start + HEADER_BYTES);
    in.get(pdu);
    return Optional.of(new Frame(transaction, unit, pdu));
  }

  /** Reads a reply PDU to a request with this read code. */
  static Reply reply(byte[] pdu, ReadCode asked) throws MalformedFrameException {
    Objects.requireNonNull(asked, "asked");
    if (pdu.length < 1) {
      throw new MalformedFrameException("empty PDU");
    }
    int function = Byte.toUnsignedInt(pdu[0]);
    if (function == EXCEPTION_FUNCTION) {
      if (pdu.length != 2) {
        throw new MalformedFrameException(
            "exception reply of " + pdu.length + " bytes (2 expected)");
      }
      return new ExceptionReply(Byte.toUnsignedInt(pdu[1]));
    }
    if (function != FUNCTION) {
      throw new MalformedFrameException(
          "reply has function 0x" + hex(function) + ", not 0x2B (Read Device Identification)");
    }
    if (pdu.length < 7) {
      throw new MalformedFrameException("reply PDU of " + pdu.length + " bytes (7 at least)");
    }
    int mei = Byte.toUnsignedInt(pdu[1]);
    if (mei != MEI_READ_DEVICE_ID) {
      throw new MalformedFrameException("reply has MEI type 0x" + hex(mei) + ", not 0x0E");
    }
    int code = Byte.toUnsignedInt(pdu[2]);
    if (code != asked.code) {
      throw new MalformedFrameException(
          "reply has read device id code " + code + " to a request for " + asked.code);
    }
    int conformity = Byte.toUnsignedInt(pdu[3]);
    int more = Byte.toUnsignedInt(pdu[4]);
    if (more != 0x00 && more != 0xFF) {
      throw new MalformedFrameException("more follows is 0x" + hex(more) + " (00 or FF only)");
    }
    int next = Byte.toUnsignedInt(pdu[5]);
    int count = Byte.toUnsignedInt(pdu[6]);
    Map<Integer, String> objects = new LinkedHashMap<>();
    int at = 7;
    for (int i = 0; i < count; i++) {
      if (at + 2 > pdu.length) {
        throw new MalformedFrameException(
            "object " + (i + 1) + " of " + count + " is cut off in the PDU");
      }
      int id = Byte.toUnsignedInt(pdu[at]);
      int length = Byte.toUnsignedInt(pdu[at + 1]);
      at += 2;
      if (at + length > pdu.length) {
        throw new MalformedFrameException(
            "object 0x" + hex(id) + " says " + length + " bytes but the PDU ends before");
      }
      if (objects.put(id, printable(pdu, at, length)) != null) {
        throw new MalformedFrameException("object 0x" + hex(id) + " appears twice");
      }
      at += length;
    }
    if (at != pdu.length) {
      throw new MalformedFrameException((pdu.length - at) + " bytes after the last object");
    }
    return new Page(conformity, more == 0xFF, next, objects);
  }

  /**
   * Object values are ASCII strings by the specification; anything outside printable ASCII (a
   * control character, a byte over 0x7E) becomes {@code ?}, so a value is always safe to log and to
   * hand to a container.
   */
  static String printable(byte[] bytes, int offset, int length) {
    StringBuilder s = new StringBuilder(length);
    for (int i = offset; i < offset + length; i++) {
      int c = Byte.toUnsignedInt(bytes[i]);
      s.append(c >= 0x20 && c <= 0x7E ? (char) c : '?');
    }
    return new String(s.toString().getBytes(StandardCharsets.US_ASCII), StandardCharsets.US_ASCII)
        .strip();
  }

  static String hex(int b) {
    return String.format("%02X", b);
  }
}
