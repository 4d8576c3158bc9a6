package io.jakri.handler.coap;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.Optional;

/**
 * The few RFC 7252 messages this handler needs: a non-confirmable {@code GET /.well-known/core}
 * (optionally asking for one block, RFC 7959 Block2) and the reading of a response to it. Bounds
 * every length it reads; pure and thread-safe.
 *
 * @param type 0 CON, 1 NON, 2 ACK, 3 RST
 * @param code class * 32 + detail (2.05 Content = 69)
 * @param messageId the message ID
 * @param token the token, 0 to 8 bytes
 * @param contentFormat the Content-Format option, if present
 * @param block2 the Block2 option, if present
 * @param payload the payload (empty without one)
 */
record CoapMessage(
    int type,
    int code,
    int messageId,
    byte[] token,
    Optional<Integer> contentFormat,
    Optional<Block> block2,
    byte[] payload) {

  static final int VERSION = 1;
  static final int NON = 1;
  static final int ACK = 2;
  static final int GET = 1;
  static final int CONTENT = 69; // 2.05
  static final int LINK_FORMAT = 40;
  private static final int URI_PATH = 11;
  private static final int CONTENT_FORMAT = 12;
  private static final int BLOCK2 = 23;

  /** A Block2 value (RFC 7959 §2.2): block number, more flag, size exponent (size 2^(4+szx)). */
  record Block(int num, boolean more, int szx) {
    int size() {
      return 1 << (4 + szx);
    }

    int encoded() {
      return (num << 4) | (more ? 8 : 0) | szx;
    }
  }

  /** Why a datagram is not a response this handler can use. */
  static final class Unreadable extends Exception {
    private static final long serialVersionUID = 1L;

    Unreadable(String reason) {
      super(reason, null, false, false);
    }
  }

  /** {@code GET /.well-known/core}, non-confirmable, with Block2 when {@code block} is given. */
  static byte[] get(int messageId, byte[] token, Optional<Block> block) {
    if (token.length > 8) {
      throw new IllegalArgumentException("token over 8 bytes");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(32);
    out.write((VERSION << 6) | (NON << 4) | token.length);
    out.write(GET);
    out.write((messageId >> 8) & 0xff);
    out.write(messageId & 0xff);
    out.writeBytes(token);
    int last =
        option(
            out, 0, URI_PATH, ".well-known".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    last = option(out, last, URI_PATH, "core".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    if (block.isPresent()) {
      option(out, last, BLOCK2, uint(block.get().encoded()));
    }
    return out.toByteArray();
  }

  private static byte[] uint(int value) {
    if (value == 0) {
      return new byte[0];
    }
    if (value < 0x100) {
      return new byte[] {(byte) value};
    }
    if (value < 0x10000) {
      return new byte[] {(byte) (value >> 8), (byte) value};
    }
    return new byte[] {(byte) (value >> 16), (byte) (value >> 8), (byte) value};
  }

  private static int option(ByteArrayOutputStream out, int previous, int number, byte[] value) {
    int delta = number - previous; // < 269 here
    int length = value.length; // < 13 here
    if (delta < 13) {
      out.write((delta << 4) | length);
    } else {
      out.write((13 << 4) | length);
      out.write(delta - 13);
    }
    out.writeBytes(value);
    return number;
  }

  /** Reads a datagram; never reads past {@code length}. */
  static CoapMessage read(byte[] data, int length) throws Unreadable {
    if (length < 4) {
      throw new Unreadable("datagram shorter than a CoAP header");
    }
    int first = data[0] & 0xff;
    if (first >> 6 != VERSION) {
      throw new Unreadable("not CoAP version 1");
    }
    int type = (first >> 4) & 3;
    int tokenLength = first & 0xf;
    if (tokenLength > 8) {
      throw new Unreadable("token length over 8");
    }
    int code = data[1] & 0xff;
    int messageId = ((data[2] & 0xff) << 8) | (data[3] & 0xff);
    int pos = 4;
    if (pos + tokenLength > length) {
      throw new Unreadable("truncated token");
    }
    byte[] token = Arrays.copyOfRange(data, pos, pos + tokenLength);
    pos += tokenLength;
    int number = 0;
    Optional<Integer> contentFormat = Optional.empty();
    Optional<Block> block2 = Optional.empty();
    int options = 0;
    while (pos < length) {
      int b = data[pos] & 0xff;
      if (b == 0xff) {
        pos++;
        if (pos == length) {
          throw new Unreadable("payload marker without a payload");
        }
        break;
      }
      if (++options > 64) {
        throw new Unreadable("more than 64 options");
      }
      pos++;
      int[] delta = {b >> 4};
      int[] optionLength = {b & 0xf};
      pos = extended(data, length, pos, delta);
      pos = extended(data, length, pos, optionLength);
      number += delta[0];
      if (pos + optionLength[0] > length) {
        throw new Unreadable("truncated option " + number);
      }
      if (number == CONTENT_FORMAT) {
        contentFormat = Optional.of(readUint(data, pos, optionLength[0]));
      } else if (number == BLOCK2) {
        int v = readUint(data, pos, optionLength[0]);
        if ((v & 7) == 7) {
          throw new Unreadable("Block2 with the reserved size exponent 7");
        }
        block2 = Optional.of(new Block(v >>> 4, (v & 8) != 0, v & 7));
      }
      pos += optionLength[0];
    }
    byte[] payload = pos < length ? Arrays.copyOfRange(data, pos, length) : new byte[0];
    return new CoapMessage(type, code, messageId, token, contentFormat, block2, payload);
  }

  private static int extended(byte[] data, int length, int pos, int[] value) throws Unreadable {
    if (value[0] == 13) {
      if (pos + 1 > length) {
        throw new Unreadable("truncated option header");
      }
      value[0] = 13 + (data[pos] & 0xff);
      return pos + 1;
    }
    if (value[0] == 14) {
      if (pos + 2 > length) {
        throw new Unreadable("truncated option header");
      }
      value[0] = 269 + (((data[pos] & 0xff) << 8) | (data[pos + 1] & 0xff));
      return pos + 2;
    }
    if (value[0] == 15) {
      throw new Unreadable("option header nibble 15 outside the payload marker");
    }
    return pos;
  }

  private static int readUint(byte[] data, int pos, int length) throws Unreadable {
    if (length > 3) {
      throw new Unreadable("integer option over 3 bytes");
    }
    int v = 0;
    for (int i = 0; i < length; i++) {
      v = (v << 8) | (data[pos + i] & 0xff);
    }
    return v;
  }

  /** The code as {@code c.dd}, for messages. */
  static String codeText(int code) {
    return (code >> 5) + "." + String.format("%02d", code & 31);
  }
}
