package io.jakri.images;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Reads a (ustar, PAX or GNU long-name) tar stream into memory: entry path to {@link Entry}. Just
 * enough tar for Jib's image and layer tarballs; not thread-safe, single use.
 */
final class TarEntries {

  /**
   * One regular file or directory; {@code content} is empty for directories, {@code mtime} in
   * seconds since the epoch.
   */
  record Entry(String path, int mode, long mtime, char type, byte[] content) {}

  private TarEntries() {}

  /** Reads all entries; paths lose a leading "./" or "/" and directories their trailing "/". */
  static Map<String, Entry> read(InputStream in) throws IOException {
    Map<String, Entry> entries = new LinkedHashMap<>();
    Optional<String> longName = Optional.empty();
    byte[] header = new byte[512];
    while (in.readNBytes(header, 0, 512) == 512 && header[0] != 0) {
      String name = text(header, 0, 100);
      String prefix = text(header, 345, 155);
      int mode = (int) octal(header, 100, 8);
      long size = octal(header, 124, 12);
      long mtime = octal(header, 136, 12);
      char type = (char) header[156];
      byte[] content = in.readNBytes((int) size);
      in.skipNBytes((512 - size % 512) % 512);
      if (type == 'x') {
        longName = paxPath(new String(content, StandardCharsets.UTF_8));
        continue;
      }
      if (type == 'L') {
        longName = Optional.of(new String(content, StandardCharsets.UTF_8).trim());
        continue;
      }
      String path = longName.orElse(prefix.isEmpty() ? name : prefix + "/" + name);
      longName = Optional.empty();
      path = path.replaceFirst("^\\./", "").replaceFirst("^/", "").replaceFirst("/$", "");
      entries.put(path, new Entry(path, mode, mtime, type, content));
    }
    return entries;
  }

  private static Optional<String> paxPath(String records) {
    for (String record : records.split("\n")) {
      int space = record.indexOf(' ');
      if (space > 0 && record.startsWith("path=", space + 1)) {
        return Optional.of(record.substring(space + 6));
      }
    }
    return Optional.empty();
  }

  private static String text(byte[] b, int off, int len) {
    int end = off;
    while (end < off + len && b[end] != 0) {
      end++;
    }
    return new String(b, off, end - off, StandardCharsets.UTF_8);
  }

  private static long octal(byte[] b, int off, int len) {
    String s = text(b, off, len).trim();
    return s.isEmpty() ? 0 : Long.parseLong(s, 8);
  }

  static byte[] readAll(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    in.transferTo(out);
    return out.toByteArray();
  }
}
