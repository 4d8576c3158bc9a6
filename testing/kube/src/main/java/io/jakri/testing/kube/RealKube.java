package io.jakri.testing.kube;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension: injects the one {@link RealApiServer} of this test JVM (started on first use,
 * stopped when the run ends), so every test class of a module shares one API server and keeps to
 * namespaces of its own. Without the binaries the test is skipped with one line, or fails when
 * {@code CI=true}.
 *
 * <pre>{@code
 * @ExtendWith(RealKube.class)
 * class SomeIT {
 *   @Test void works(RealApiServer api) { ... }
 * }
 * }</pre>
 */
public final class RealKube implements ParameterResolver {

  private static final ExtensionContext.Namespace STORE =
      ExtensionContext.Namespace.create(RealKube.class);

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == RealApiServer.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return shared(context);
  }

  /** The JVM's shared API server, started on first use. */
  public static RealApiServer shared(ExtensionContext context) {
    Holder holder =
        context
            .getRoot()
            .getStore(STORE)
            .getOrComputeIfAbsent(Holder.class, k -> Holder.start(), Holder.class);
    if (holder.server == null) {
      unavailable(holder.problem);
    }
    return holder.server;
  }

  /** Skips the test with {@code reason}, or fails it when CI=true (a missing peer is a defect). */
  public static void unavailable(String reason) {
    if ("true".equalsIgnoreCase(System.getenv("CI"))) {
      Assertions.fail("CI=true and the real Kubernetes peer is unavailable: " + reason);
    }
    Assumptions.abort("real Kubernetes peer unavailable: " + reason);
  }

  /** The binaries of this machine, unpacked into {@code target/k8s-bin}. */
  public static KubeBinaries.Result binaries() {
    return KubeBinaries.locate(Path.of("target", "k8s-bin").toAbsolutePath());
  }

  private static final class Holder implements ExtensionContext.Store.CloseableResource {
    final RealApiServer server;
    final String problem;

    Holder(RealApiServer server, String problem) {
      this.server = server;
      this.problem = problem;
    }

    static Holder start() {
      KubeBinaries.Result found = binaries();
      if (found.binaries().isEmpty()) {
        return new Holder(null, found.missing().reason());
      }
      try {
        Path dir =
            Files.createTempDirectory(
                Files.createDirectories(Path.of("target", "real-kube").toAbsolutePath()), "api-");
        return new Holder(RealApiServer.start(found.binaries().get(), dir, List.of()), "");
      } catch (IOException e) {
        return new Holder(null, "cannot start kube-apiserver: " + e.getMessage());
      }
    }

    @Override
    public void close() {
      if (server != null) {
        server.close();
      }
    }
  }
}
