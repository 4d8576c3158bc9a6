package io.jakri.kubelet.emulator;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The directory the emulator serves in, kept apart from a real kubelet's. Before serving it refuses
 * a {@code kubelet.sock} or PodResources socket that accepts connections and a checkpoint the
 * emulator did not write; then it creates the directories. It removes only sockets the emulator
 * bound itself and, on {@link KubeletEmulator#restart()}, those of plugins that registered with it
 * (a restarting kubelet removes them so that its plugins register again); any other file stays.
 * Thread-safe.
 */
final class EmulatorDirectory {
  private static final Logger log = LoggerFactory.getLogger(EmulatorDirectory.class);
  private static final int S_IFMT = 0170000;
  private static final int S_IFSOCK = 0140000;

  private final Path dir;
  private final Path kubeletSocket;
  private final Path podResourcesSocket;

  // Guarded by this: sockets of plugins that registered since the last restart.
  private final Set<Path> pluginSockets = new LinkedHashSet<>();
  // Guarded by this: the emulator's own sockets it bound, so they are its to remove.
  private final Set<Path> bound = new LinkedHashSet<>();

  EmulatorDirectory(Path dir, Path kubeletSocket, Path podResourcesSocket) {
    this.dir = dir;
    this.kubeletSocket = kubeletSocket;
    this.podResourcesSocket = podResourcesSocket;
  }

  /**
   * Checks that no kubelet owns the directory, then creates it and the PodResources socket's
   * directory and removes a dead socket file (nobody listens) at the emulator's own socket paths.
   *
   * @throws EmulatorStartException with one line naming the path and the reason; nothing in the
   *     directory was changed
   */
  void prepare() throws EmulatorStartException {
    if (answers(kubeletSocket)) {
      throw new EmulatorStartException(
          "a kubelet is already serving "
              + kubeletSocket
              + ": the kubelet emulator will not take its place; give it a directory of its own");
    }
    if (answers(podResourcesSocket)) {
      throw new EmulatorStartException(
          "something already serves "
              + podResourcesSocket
              + ": the kubelet emulator will not take its place; give it a socket of its own");
    }
    refuseForeignCheckpoint();
    createDirectories(dir);
    Path parent = podResourcesSocket.toAbsolutePath().getParent();
    if (parent != null) {
      createDirectories(parent);
    }
    if (!Files.isWritable(dir)) {
      throw new EmulatorStartException("cannot write in " + dir + ": permission denied");
    }
    removeDead(kubeletSocket);
    removeDead(podResourcesSocket);
  }

  /** The emulator bound {@code socket}: it is now its to remove. */
  synchronized void bound(Path socket) {
    bound.add(socket);
  }

  /** A plugin registers with its socket at {@code socket}; only top-level sockets are kept. */
  synchronized void pluginRegistering(Path socket) {
    Path s = socket.toAbsolutePath().normalize();
    if (dir.toAbsolutePath().normalize().equals(s.getParent())) {
      pluginSockets.add(s);
    }
  }

  /**
   * Like a restarting kubelet, removes the sockets of plugins that registered with the emulator
   * (and its own, served again next): the plugins notice and register again. Sockets of anyone else
   * and every other file stay.
   */
  void removeForRestart() {
    List<Path> remove = new ArrayList<>();
    synchronized (this) {
      remove.addAll(pluginSockets);
      pluginSockets.clear();
      remove.addAll(bound);
      bound.clear();
    }
    for (Path socket : remove) {
      if (isSocket(socket)) {
        try {
          Files.deleteIfExists(socket);
          log.info("Removed socket {}", socket);
        } catch (IOException e) {
          log.warn("Could not remove socket {}: {}", socket, e.toString());
        }
      }
    }
  }

  /** Removes the emulator's own sockets if it bound them; never anyone else's. */
  void removeOwnSockets() {
    List<Path> own;
    synchronized (this) {
      own = List.copyOf(bound);
      bound.clear();
    }
    for (Path socket : own) {
      try {
        if (isSocket(socket)) {
          Files.deleteIfExists(socket);
        }
      } catch (IOException e) {
        log.warn("Could not remove {}: {}", socket, e.toString());
      }
    }
  }

  /** The reason an I/O error stopped the emulator from serving {@code socket}, as one line. */
  static EmulatorStartException cannotServe(Path socket, IOException e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String why = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    return new EmulatorStartException("cannot listen on " + socket + ": " + why);
  }

  private void refuseForeignCheckpoint() throws EmulatorStartException {
    Path checkpoint = dir.resolve(Checkpoint.FILE_NAME);
    if (!Files.isRegularFile(checkpoint)) {
      return;
    }
    String json;
    try {
      json = Files.readString(checkpoint, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new EmulatorStartException("cannot read " + checkpoint + ": " + reason(checkpoint, e));
    }
    if (!Checkpoint.writtenByEmulator(json)) {
      throw new EmulatorStartException(
          checkpoint
              + " is a real kubelet's checkpoint: the kubelet emulator will not overwrite it; give"
              + " it a directory of its own");
    }
  }

  private static void createDirectories(Path path) throws EmulatorStartException {
    try {
      Files.createDirectories(path);
    } catch (IOException e) {
      throw new EmulatorStartException("cannot create directory " + path + ": " + reason(path, e));
    }
  }

  private static void removeDead(Path socket) {
    if (isSocket(socket) && !answers(socket)) {
      try {
        Files.deleteIfExists(socket);
        log.info("Replaced {}: nobody listened on it", socket);
      } catch (IOException e) {
        log.debug("Could not remove {}: {}", socket, e.toString());
      }
    }
  }

  /** Why {@code path} could not be made or read, without repeating it. */
  private static String reason(Path path, IOException e) {
    String file = e instanceof FileSystemException f && f.getFile() != null ? f.getFile() : "";
    String on = file.isEmpty() || file.equals(path.toString()) ? "" : " (" + file + ")";
    if (e instanceof AccessDeniedException) {
      return "permission denied" + on;
    }
    if (e instanceof FileAlreadyExistsException) {
      return (on.isEmpty() ? "it" : file) + " exists and is not a directory";
    }
    if (e instanceof FileSystemException f && f.getReason() != null) {
      return "Not a directory".equals(f.getReason())
          ? "a part of its path is not a directory" + on
          : f.getReason() + on;
    }
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }

  /** Whether a Unix socket at {@code socket} accepts a connection. */
  static boolean answers(Path socket) {
    if (!Files.exists(socket)) {
      return false;
    }
    try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      return channel.connect(UnixDomainSocketAddress.of(socket));
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  static boolean isSocket(Path p) {
    try {
      int mode = (Integer) Files.getAttribute(p, "unix:mode");
      return (mode & S_IFMT) == S_IFSOCK;
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return false;
    }
  }
}
