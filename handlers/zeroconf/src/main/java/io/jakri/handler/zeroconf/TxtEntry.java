package io.jakri.handler.zeroconf;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * One DNS-SD TXT attribute (RFC 6763 §6): a key and, unless it is a boolean attribute written
 * without {@code =}, a value. Both are decoded from UTF-8; undecodable bytes become U+FFFD.
 *
 * @param key the key exactly as published (DNS-SD keys compare case-insensitively)
 * @param value the value; empty for a boolean attribute ({@code key} with no {@code =})
 */
public record TxtEntry(String key, Optional<String> value) {

  public TxtEntry {
    Objects.requireNonNull(key, "key");
    value = value == null ? Optional.empty() : value;
  }

  public static TxtEntry of(String key, String value) {
    return new TxtEntry(key, Optional.of(value));
  }

  /**
   * Most attributes kept from one TXT record; DNS-SD recommends records well under 1,300 bytes (RFC
   * 6763 §6.2), so real services stay far below it.
   */
  public static final int MAX_ATTRIBUTES = 256;

  /**
   * Decodes TXT record data (a sequence of length-prefixed strings) into attributes in wire order.
   *
   * <p>Follows RFC 6763 §6.4/6.5: only the first occurrence of a key (case-insensitively) counts,
   * strings without a key ({@code =value}) and empty strings are ignored. A string whose length
   * runs past the end of the data ends decoding; what came before it is kept. {@code null} or empty
   * data gives no attributes. At most {@value #MAX_ATTRIBUTES} attributes are kept (a hostile 64
   * KiB record could otherwise hold some 20,000, kept per service); the limits on what becomes a
   * property belong to {@link ZeroconfProperties}. Pure function.
   */
  public static List<TxtEntry> decode(byte[] data) {
    List<TxtEntry> entries = new ArrayList<>();
    if (data == null) {
      return entries;
    }
    Set<String> seen = new HashSet<>();
    int offset = 0;
    while (offset < data.length) {
      int length = data[offset++] & 0xFF;
      if (offset + length > data.length) {
        break;
      }
      int equals = offset;
      int end = offset + length;
      while (equals < end && data[equals] != '=') {
        equals++;
      }
      if (equals > offset) {
        String key = new String(data, offset, equals - offset, StandardCharsets.UTF_8);
        Optional<String> value =
            equals < end
                ? Optional.of(
                    new String(data, equals + 1, end - equals - 1, StandardCharsets.UTF_8))
                : Optional.empty();
        if (seen.add(key.toLowerCase(Locale.ROOT))) {
          entries.add(new TxtEntry(key, value));
          if (entries.size() >= MAX_ATTRIBUTES) {
            break;
          }
        }
      }
      offset = end;
    }
    return entries;
  }
}
