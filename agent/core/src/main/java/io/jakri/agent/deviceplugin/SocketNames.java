package io.jakri.agent.deviceplugin;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;

/**
 * The socket file a resource's server listens on: {@code <stem>-<unix seconds>.sock} in the
 * device-plugin directory, as the kubelet's own plugins name theirs.
 *
 * <p>A Unix socket's path holds at most {@value #MAX_PATH_BYTES} bytes ({@code sun_path} less its
 * terminating NUL). A stem that would make the path longer (a class resource such as {@code
 * example.com/<a long name>}, or a long device-plugin directory) is shortened to as much of its
 * start as fits, followed by {@code -} and {@value #HASH_CHARS} hex characters of its SHA-256, so
 * two long stems sharing a start still get different files. Stems that fit are kept as they are.
 */
public final class SocketNames {

  /** The longest path a Unix socket may have on Linux, in bytes. */
  static final int MAX_PATH_BYTES = 107;

  static final int HASH_CHARS = 10;

  /**
   * The shortest socket name {@link #socket} makes: one character of the stem, {@code -}, the hash,
   * {@code -}, ten digits of seconds and {@code .sock}.
   */
  static final int SHORTEST_NAME_BYTES = 1 + 1 + HASH_CHARS + 1 + 10 + ".sock".length();

  /** The longest device-plugin directory in which every resource's socket fits. */
  public static final int MAX_DIR_BYTES = MAX_PATH_BYTES - 1 - SHORTEST_NAME_BYTES;

  private SocketNames() {}

  /**
   * The socket for {@code stem} in {@code dir} at {@code epochSecond}. In a directory so long that
   * not even a shortened name fits, the shortest name (the stem's first character and its hash);
   * binding it then fails with the system's error, logged and retried as any failed start.
   */
  static Path socket(Path dir, String stem, long epochSecond) {
    String suffix = "-" + epochSecond + ".sock";
    int room = MAX_PATH_BYTES - bytes(dir.toString()) - 1 - bytes(suffix);
    if (bytes(stem) <= room) {
      return dir.resolve(stem + suffix);
    }
    String hash = "-" + hash(stem);
    int keep = Math.max(1, room - hash.length());
    return dir.resolve(prefix(stem, keep) + hash + suffix);
  }

  /**
   * Why no socket can be served in {@code dir}, if so: a directory longer than {@value
   * #MAX_DIR_BYTES} bytes leaves no room for even the shortest name, and every bind would fail.
   */
  public static Optional<String> tooLong(Path dir) {
    int length = bytes(dir.toString());
    if (length <= MAX_DIR_BYTES) {
      return Optional.empty();
    }
    return Optional.of(
        "device-plugin directory "
            + dir
            + " is "
            + length
            + " bytes long: no socket in it fits the "
            + MAX_PATH_BYTES
            + " bytes a Unix socket path may have; use a directory of at most "
            + MAX_DIR_BYTES
            + " bytes");
  }

  /** The longest start of {@code s} of at most {@code max} UTF-8 bytes, cut at a character. */
  private static String prefix(String s, int max) {
    int end = 0;
    int used = 0;
    while (end < s.length()) {
      int cp = s.codePointAt(end);
      int size = bytes(new String(Character.toChars(cp)));
      if (used + size > max) {
        break;
      }
      used += size;
      end += Character.charCount(cp);
    }
    return s.substring(0, end);
  }

  private static int bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8).length;
  }

  private static String hash(String stem) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(stem.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest).substring(0, HASH_CHARS);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }
}
