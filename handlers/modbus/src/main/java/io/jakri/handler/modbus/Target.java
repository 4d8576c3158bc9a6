package io.jakri.handler.modbus;

import java.math.BigInteger;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One entry of {@code addresses}: a host name, or an IP address block (one address = /32, /128).
 */
sealed interface Target {

  /** How many addresses this entry may stand for (a host name counts as one). */
  long size();

  /** Its text as written, normalised. */
  String text();

  /**
   * A DNS name, resolved at each scan (first address only: one name is one device).
   *
   * @param name the host name
   */
  record HostName(String name) implements Target {
    @Override
    public long size() {
      return 1;
    }

    @Override
    public String text() {
      return name;
    }
  }

  /**
   * A CIDR block or a single address.
   *
   * @param base the first address (host bits zero)
   * @param prefix the prefix length
   */
  record Block(byte[] base, int prefix) implements Target {
    public Block {
      base = base.clone();
    }

    @Override
    public byte[] base() {
      return base.clone();
    }

    @Override
    public long size() {
      int hostBits = base.length * 8 - prefix;
      return hostBits >= 62 ? Long.MAX_VALUE : 1L << hostBits;
    }

    @Override
    public String text() {
      String address = literal(base);
      return prefix == base.length * 8 ? address : address + "/" + prefix;
    }

    /** Every address of the block, in order (call only for blocks within the cap). */
    List<String> addresses() {
      List<String> out = new ArrayList<>();
      BigInteger first = new BigInteger(1, base);
      long n = size();
      for (long i = 0; i < n; i++) {
        byte[] raw = first.add(BigInteger.valueOf(i)).toByteArray();
        byte[] fixed = new byte[base.length];
        int copy = Math.min(raw.length, fixed.length);
        System.arraycopy(raw, raw.length - copy, fixed, fixed.length - copy, copy);
        out.add(literal(fixed));
      }
      return out;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Block b && b.prefix == prefix && java.util.Arrays.equals(b.base, base);
    }

    @Override
    public int hashCode() {
      return java.util.Arrays.hashCode(base) * 31 + prefix;
    }

    @Override
    public String toString() {
      return "Block[" + text() + "]";
    }
  }

  /** The outcome of parsing one entry: the target, or a problem at a 1-based column. */
  record Result(Optional<Target> target, int column, String problem) {}

  /** Parses one entry of {@code addresses}; pure (host names are not resolved here). */
  static Result parse(String entry) {
    if (entry.isEmpty()) {
      return new Result(Optional.empty(), 1, "empty entry");
    }
    int slash = entry.indexOf('/');
    String address = slash < 0 ? entry : entry.substring(0, slash);
    boolean literal = address.indexOf(':') >= 0 || address.matches("[0-9.]+");
    if (!literal) {
      if (slash >= 0) {
        return new Result(Optional.empty(), slash + 1, "a host name takes no /prefix");
      }
      for (int i = 0; i < entry.length(); i++) {
        char c = entry.charAt(i);
        if (!(Character.isLetterOrDigit(c) && c < 0x80) && c != '-' && c != '.') {
          return new Result(
              Optional.empty(), i + 1, "character '" + c + "' is not allowed in a host name");
        }
      }
      if (entry.length() > 253) {
        return new Result(Optional.empty(), 254, "a host name has at most 253 characters");
      }
      return new Result(Optional.of(new HostName(entry.toLowerCase(java.util.Locale.ROOT))), 0, "");
    }
    Optional<byte[]> bytes = ipLiteral(address);
    if (bytes.isEmpty()) {
      return new Result(Optional.empty(), 1, "\"" + address + "\" is not an IPv4 or IPv6 address");
    }
    int bits = bytes.get().length * 8;
    int prefix = bits;
    if (slash >= 0) {
      String p = entry.substring(slash + 1);
      if (!p.matches("[0-9]{1,3}") || Integer.parseInt(p) > bits) {
        return new Result(
            Optional.empty(), slash + 2, "prefix length must be a number from 0 to " + bits);
      }
      prefix = Integer.parseInt(p);
    }
    byte[] base = bytes.get();
    for (int bit = prefix; bit < bits; bit++) {
      if ((base[bit / 8] & (0x80 >> (bit % 8))) != 0) {
        return new Result(
            Optional.empty(),
            slash + 2,
            "host bits are set: the block /"
                + prefix
                + " starts at "
                + literal(mask(base, prefix)));
      }
    }
    return new Result(Optional.of(new Block(base, prefix)), 0, "");
  }

  private static byte[] mask(byte[] base, int prefix) {
    byte[] out = base.clone();
    for (int bit = prefix; bit < out.length * 8; bit++) {
      out[bit / 8] &= (byte) ~(0x80 >> (bit % 8));
    }
    return out;
  }

  /** An IPv4 dotted quad or an IPv6 literal, never a name lookup. */
  private static Optional<byte[]> ipLiteral(String s) {
    if (s.indexOf(':') < 0) {
      String[] parts = s.split("\\.", -1);
      if (parts.length != 4) {
        return Optional.empty();
      }
      byte[] out = new byte[4];
      for (int i = 0; i < 4; i++) {
        if (!parts[i].matches("[0-9]{1,3}") || Integer.parseInt(parts[i]) > 255) {
          return Optional.empty();
        }
        out[i] = (byte) Integer.parseInt(parts[i]);
      }
      return Optional.of(out);
    }
    if (!s.matches("[0-9A-Fa-f:.]+")) {
      return Optional.empty();
    }
    try {
      // Only hex digits, colons and dots reach here: the JDK parses the literal, no lookup.
      byte[] raw = InetAddress.getByName(s).getAddress();
      return Optional.of(raw);
    } catch (UnknownHostException e) {
      return Optional.empty();
    }
  }

  static String literal(byte[] address) {
    try {
      return InetAddress.getByAddress(address).getHostAddress();
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException(e);
    }
  }
}
