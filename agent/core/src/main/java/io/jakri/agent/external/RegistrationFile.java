package io.jakri.agent.external;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import v0.Discovery.RegisterDiscoveryHandlerRequest;

/**
 * The registrations kept in the discovery-handlers directory ({@value #FILE_NAME}), so an agent
 * that restarts dials the handlers again at once instead of losing them until they register again
 * (Akri issue #558). Akri's own {@code RegisterDiscoveryHandlerRequest} messages, length-delimited;
 * written to a temporary file and renamed into place, owner-only.
 */
final class RegistrationFile {

  private static final Logger LOG = LoggerFactory.getLogger(RegistrationFile.class);

  static final String FILE_NAME = "jakri-registrations.pb";

  /** More registrations than the agent keeps are never read back. */
  private static final int MAX_ENTRIES = ExternalHandlers.MAX_ENDPOINTS;

  private final Path file;

  RegistrationFile(Path directory) {
    this.file = directory.resolve(FILE_NAME);
  }

  Path path() {
    return file;
  }

  /** The registrations saved last; empty (with a log line) when missing or unreadable. */
  List<RegisterDiscoveryHandlerRequest> load() {
    List<RegisterDiscoveryHandlerRequest> requests = new ArrayList<>();
    if (!Files.isRegularFile(file)) {
      return requests;
    }
    try (InputStream in = Files.newInputStream(file)) {
      RegisterDiscoveryHandlerRequest request;
      while (requests.size() < MAX_ENTRIES
          && (request = RegisterDiscoveryHandlerRequest.parseDelimitedFrom(in)) != null) {
        requests.add(request);
      }
    } catch (IOException | RuntimeException e) {
      LOG.error(
          "registrations file {} cannot be read ({}); handlers are taken back when they register"
              + " again",
          file,
          e.toString());
      return new ArrayList<>();
    }
    return requests;
  }

  /** Replaces the saved registrations; a failure is logged (the registrations still work). */
  void save(Collection<ExternalEndpoint> endpoints) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try {
      for (ExternalEndpoint e : endpoints) {
        e.toRequest().writeDelimitedTo(bytes);
      }
      Path tmp = file.resolveSibling("." + FILE_NAME + ".tmp");
      Files.deleteIfExists(tmp);
      Files.createFile(
          tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      Files.write(tmp, bytes.toByteArray());
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "registrations file {} cannot be written ({}); after a restart handlers are taken back"
              + " only when they register again",
          file,
          e.toString());
    }
  }
}
