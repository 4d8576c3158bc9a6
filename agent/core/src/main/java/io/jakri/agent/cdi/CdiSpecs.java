package io.jakri.agent.cdi;

import io.jakri.kubelet.v1beta1.ContainerAllocateResponseOrBuilder;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CDI spec files of the Instances this node serves, one {@code akri.sh-<instance>.json} each in
 * one directory (default {@code /var/run/cdi}, where containerd and CRI-O look).
 *
 * <p>A spec is written as a temporary file in the same directory and moved over the old one
 * atomically, so a runtime reading the directory sees the old spec or the new one, never a part of
 * either; it is written again only when its content changed. Files are owner-only ({@code 0600}),
 * as the CDI library writes them. {@link #start} removes the files of ours an earlier run left
 * (only names matching {@code akri.sh-*.json} and our temporary files); {@link #close} removes
 * every spec written. Files are not synced to disk: {@code /var/run} is a tmpfs, and whatever
 * survives a crash is removed at the next start.
 *
 * <p>Thread-safety: {@link #serve}, {@link #retire}, {@link #start} and {@link #close} are
 * serialized; {@link #qualifiedName} is lock-free and may be called from any thread (gRPC).
 */
public final class CdiSpecs implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(CdiSpecs.class);

  private static final Pattern SPEC_FILE =
      Pattern.compile(Pattern.quote(CdiNames.VENDOR + "-") + ".+\\.json");
  private static final Pattern TEMP_FILE =
      Pattern.compile(Pattern.quote("." + CdiNames.VENDOR + "-") + ".+\\.json\\.tmp");

  private static final java.nio.file.attribute.FileAttribute<?> OWNER_ONLY =
      java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
          java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));

  /** A spec on disk: its Configuration (for the qualified names) and a digest of its content. */
  private record Written(String configuration, byte[] digest) {}

  private final Path dir;
  private final Map<String, Written> written = new ConcurrentHashMap<>();
  private final Set<String> refusedConfigurations = ConcurrentHashMap.newKeySet();
  private boolean usable;
  private boolean closed;

  /** Specs in {@code dir} (created by {@link #start} if missing). */
  public CdiSpecs(Path dir) {
    this.dir = dir;
  }

  public Path directory() {
    return dir;
  }

  /**
   * Creates the directory if needed and removes stale files of ours. If the directory cannot be
   * used, says so in one log line and writes nothing (the device plugins work on without CDI).
   */
  public synchronized void start() {
    try {
      Files.createDirectories(dir);
      int removed = 0;
      try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
        for (Path file : files) {
          String name = file.getFileName().toString();
          if ((SPEC_FILE.matcher(name).matches() || TEMP_FILE.matcher(name).matches())
              && Files.isRegularFile(file, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            Files.deleteIfExists(file);
            removed++;
          }
        }
      }
      usable = true;
      LOG.info(
          "CDI specs in {} (kind {}, one file {} per Instance){}",
          dir,
          CdiNames.kind("<configuration>"),
          CdiNames.specFileName("<instance>"),
          removed == 0 ? "" : "; removed " + removed + " left by an earlier run");
    } catch (IOException | SecurityException e) {
      LOG.error(
          "CDI specs cannot be written in {} ({}); devices are served without CDI",
          dir,
          e.toString());
    }
  }

  /**
   * Writes (or rewrites, when its content changed) the spec of {@code instance}, a device of {@code
   * configuration} with {@code capacity} slots and {@code contract} (the Instance resource's
   * Allocate answer). Idempotent. A Configuration name that cannot be a CDI kind is logged once and
   * gets no spec.
   */
  public synchronized void serve(
      String instance,
      String configuration,
      int capacity,
      ContainerAllocateResponseOrBuilder contract) {
    if (!usable || closed) {
      return;
    }
    Optional<String> kindProblem = CdiSpec.kindProblem(configuration);
    if (kindProblem.isPresent()) {
      if (refusedConfigurations.add(configuration)) {
        LOG.warn(
            "configuration {}: no CDI specs for its devices: {}", configuration, kindProblem.get());
      }
      retire(instance);
      return;
    }
    Path target = specFile(instance);
    if (target == null) {
      return;
    }
    Path temp = dir.resolve("." + target.getFileName() + ".tmp");
    try {
      CdiSpec.Rendered rendered = CdiSpec.render(instance, configuration, capacity, contract);
      byte[] json = rendered.json();
      byte[] digest = digest(json);
      Written previous = written.get(instance);
      if (previous != null
          && previous.configuration().equals(configuration)
          && Arrays.equals(previous.digest(), digest)) {
        return;
      }
      for (String drop : rendered.dropped()) {
        LOG.warn("instance {}: left out of its CDI spec: {}", instance, drop);
      }
      // Owner-only from the start, as the CDI library writes specs: values may come from
      // brokerProperties and devices, and the runtime reading them runs as root.
      Files.deleteIfExists(temp);
      Files.createFile(temp, OWNER_ONLY);
      Files.write(temp, json);
      Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      written.put(instance, new Written(configuration, digest));
    } catch (IOException | RuntimeException e) {
      // Without its spec the Instance's slots are not named in Allocate (a runtime would refuse a
      // CDI device it cannot find), and an older spec of it would describe other properties: it
      // goes too. The device plugins serve the Instance all the same.
      written.remove(instance);
      LOG.warn("instance {}: CDI spec not written to {}: {}", instance, target, e.toString());
      delete(instance);
      try {
        Files.deleteIfExists(temp);
      } catch (IOException ignored) {
        // Removed at the next start.
      }
    }
  }

  /** Removes the spec of {@code instance}, if there is one. Idempotent. */
  public synchronized void retire(String instance) {
    if (written.remove(instance) == null) {
      return;
    }
    delete(instance);
  }

  /**
   * The fully qualified CDI device name of {@code slot} of {@code instance}, while its spec is on
   * disk; empty otherwise (a container runtime would refuse a CDI device it cannot resolve).
   */
  public Optional<String> qualifiedName(String instance, String slot) {
    Written w = written.get(instance);
    return w == null
        ? Optional.empty()
        : Optional.of(CdiNames.qualifiedName(w.configuration, slot));
  }

  /** The Instances whose specs are on disk. */
  public Set<String> instances() {
    return Set.copyOf(written.keySet());
  }

  /** Removes every spec written; later calls write nothing. Idempotent. */
  @Override
  public synchronized void close() {
    closed = true;
    for (String instance : Set.copyOf(written.keySet())) {
      retire(instance);
    }
  }

  private void delete(String instance) {
    Path file = specFile(instance);
    if (file == null) {
      return;
    }
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      LOG.warn("instance {}: CDI spec {} not removed: {}", instance, file, e.toString());
    }
  }

  /** The spec file of {@code instance}, or null for a name that would leave the directory. */
  private Path specFile(String instance) {
    Path file = dir.resolve(CdiNames.specFileName(instance));
    if (instance.indexOf('/') >= 0 || instance.contains("..") || !dir.equals(file.getParent())) {
      LOG.warn("instance {}: no CDI spec for this name", io.jakri.logging.LogText.quote(instance));
      return null;
    }
    return file;
  }

  private static byte[] digest(byte[] json) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(json);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
    }
  }
}
