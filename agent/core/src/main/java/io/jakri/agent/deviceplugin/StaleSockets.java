package io.jakri.agent.deviceplugin;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes device-plugin sockets a previous agent left behind (killed without its shutdown): files
 * named like the agent's sockets ({@code <stem>-<unix seconds>.sock}) that nobody listens on any
 * more. A socket that still accepts a connection belongs to a live plugin and is kept, so another
 * device plugin sharing the directory is never disturbed.
 */
public final class StaleSockets {

  private static final Logger LOG = LoggerFactory.getLogger(StaleSockets.class);
  private static final Pattern OURS = Pattern.compile("[a-z0-9][-a-z0-9._]*-[0-9]{9,}\\.sock");

  private StaleSockets() {}

  /** Deletes stale agent sockets in {@code dir}; returns the files removed. Never throws. */
  public static List<Path> remove(Path dir) {
    List<Path> removed = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      return removed;
    }
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*.sock")) {
      for (Path file : files) {
        String name = file.getFileName().toString();
        if (!OURS.matcher(name).matches() || listening(file)) {
          continue;
        }
        try {
          if (Files.deleteIfExists(file)) {
            removed.add(file);
          }
        } catch (IOException e) {
          LOG.warn("cannot remove stale socket {}: {}", file, e.toString());
        }
      }
    } catch (IOException e) {
      LOG.warn("cannot list {} for stale sockets: {}", dir, e.toString());
    }
    if (!removed.isEmpty()) {
      LOG.info("removed {} stale device-plugin sockets left by an earlier agent", removed.size());
    }
    return removed;
  }

  private static boolean listening(Path socket) {
    try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      return channel.connect(UnixDomainSocketAddress.of(socket));
    } catch (IOException e) {
      return false;
    }
  }
}
