package io.jakri.testing.kube;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Optional;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;

/**
 * Where the real binaries come from: {@code kube-apiserver} (and {@code kubelet}) of Kubernetes
 * 1.26.4 from the directory named by {@code JAKRI_K8S_DIR} (or {@code -Djakri.k8s.dir}), or from
 * {@code shared/k8s} beside the checkout; {@code etcd} from {@code JAKRI_ETCD} or the {@code PATH}
 * (Debian's {@code etcd-server}). Gzipped binaries are unpacked once into {@code work}.
 */
public record KubeBinaries(Path apiServer, Path etcd, Optional<Path> kubelet, Path k8sDir) {

  static final String API_SERVER_GZ = "kube-apiserver-1.26.4-ocp.gz";
  static final String KUBELET_GZ = "kubelet-1.26.4-ocp.gz";

  /** Where the binaries were looked for and what is missing, for a skip or failure message. */
  public record Missing(String reason) {}

  /** Finds the binaries, unpacking gzipped ones into {@code work}; or says what is missing. */
  public static Result locate(Path work) {
    Optional<Path> dir = findK8sDir();
    if (dir.isEmpty()) {
      return new Result(
          Optional.empty(),
          new Missing(
              "no Kubernetes binaries: set JAKRI_K8S_DIR to a directory holding "
                  + API_SERVER_GZ
                  + " (or kube-apiserver), or put shared/k8s beside the checkout"));
    }
    Optional<Path> etcd = findEtcd();
    if (etcd.isEmpty()) {
      return new Result(
          Optional.empty(),
          new Missing("no etcd on the PATH: apt-get install etcd-server (or set JAKRI_ETCD)"));
    }
    try {
      Path apiServer = binary(dir.get(), "kube-apiserver", API_SERVER_GZ, work);
      Optional<Path> kubelet =
          Files.exists(dir.get().resolve(KUBELET_GZ)) || Files.exists(dir.get().resolve("kubelet"))
              ? Optional.of(binary(dir.get(), "kubelet", KUBELET_GZ, work))
              : Optional.empty();
      return new Result(
          Optional.of(new KubeBinaries(apiServer, etcd.get(), kubelet, dir.get())),
          new Missing(""));
    } catch (IOException e) {
      return new Result(
          Optional.empty(),
          new Missing("cannot unpack the Kubernetes binaries: " + e.getMessage()));
    }
  }

  /** Either the binaries or why there are none. */
  public record Result(Optional<KubeBinaries> binaries, Missing missing) {}

  private static Optional<Path> findK8sDir() {
    String named = System.getProperty("jakri.k8s.dir", System.getenv("JAKRI_K8S_DIR"));
    if (named != null && !named.isBlank()) {
      return Optional.of(Path.of(named).toAbsolutePath());
    }
    // The checkout's parent holds shared/k8s (CI clones beside it); walk up from the module.
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      Path candidate = p.resolve("shared").resolve("k8s");
      if (Files.exists(candidate.resolve(API_SERVER_GZ))) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
  }

  private static Optional<Path> findEtcd() {
    String named = System.getenv("JAKRI_ETCD");
    if (named != null && !named.isBlank()) {
      return Optional.of(Path.of(named)).filter(Files::isExecutable);
    }
    return onPath("etcd");
  }

  /** An executable named {@code name} on the PATH (or in /usr/sbin, /usr/bin). */
  public static Optional<Path> onPath(String name) {
    String path = System.getenv().getOrDefault("PATH", "") + ":/usr/sbin:/usr/bin:/sbin:/bin";
    return Stream.of(path.split(":"))
        .filter(s -> !s.isEmpty())
        .map(s -> Path.of(s, name))
        .filter(Files::isExecutable)
        .findFirst();
  }

  private static Path binary(Path dir, String name, String gz, Path work) throws IOException {
    Path plain = dir.resolve(name);
    if (Files.isExecutable(plain)) {
      return plain;
    }
    Files.createDirectories(work);
    Path out = work.resolve(name);
    Path source = dir.resolve(gz);
    if (Files.isExecutable(out)
        && Files.getLastModifiedTime(out).compareTo(Files.getLastModifiedTime(source)) >= 0) {
      return out;
    }
    Path tmp = Files.createTempFile(work, name, ".part");
    try (InputStream in = new GZIPInputStream(Files.newInputStream(source), 1 << 16);
        OutputStream os = Files.newOutputStream(tmp)) {
      in.transferTo(os);
    }
    tmp.toFile().setExecutable(true);
    Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    return out;
  }
}
