package io.jakri.agent.deviceplugin;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Existence and identity of socket files, without exceptions for the common case of a missing file.
 * After a kubelet restart every one of thousands of sockets is missing at once, and on JDK 17
 * {@link Files#exists} and {@link Files#readAttributes} report a missing file by building two
 * exceptions with their stack traces (measured with JFR: three per served Instance per restart).
 */
final class SocketFiles {

  private SocketFiles() {}

  /** Whether the path exists (a stat; no exception when it does not). */
  static boolean exists(Path path) {
    return path.toFile().exists();
  }

  /**
   * The file's identity (device and inode); empty if it does not exist or cannot be read. The
   * creation time stands in where a filesystem has no file key. Links are followed unless {@link
   * LinkOption#NOFOLLOW_LINKS} is given.
   */
  static Optional<Object> key(Path path, LinkOption... options) {
    if (!exists(path)) {
      return Optional.empty(); // also a dangling link: there is no socket to identify
    }
    try {
      BasicFileAttributes attrs = Files.readAttributes(path, BasicFileAttributes.class, options);
      // The inode alone is not enough: a socket removed and created again at once (a kubelet
      // restart) often gets the same inode number back. Its times tell the new file apart.
      return Optional.of(
          List.of(
              Objects.requireNonNullElse(attrs.fileKey(), ""),
              attrs.creationTime(),
              attrs.lastModifiedTime()));
    } catch (IOException e) {
      return Optional.empty(); // removed since
    }
  }
}
