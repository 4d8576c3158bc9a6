package io.jakri.handler.mqtt;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real mosquitto broker for tests and the bench, on a free loopback port with its config in a
 * temp dir, and {@code mosquitto_pub} to announce. Without mosquitto {@link #start} throws {@link
 * Unavailable}; tests start it through {@link NeedsMosquitto}, which skips them (or fails when
 * {@code CI=true}). No JUnit here: the bench uses this class from the test-jar.
 */
public final class Mosquitto implements AutoCloseable {

  /** mosquitto or mosquitto_pub is not installed. */
  public static final class Unavailable extends Exception {
    private static final long serialVersionUID = 1L;

    Unavailable(String message) {
      super(message);
    }
  }

  private final Path dir;
  private final int port;
  private final String scheme;
  private final List<String> pubArgs;
  private Process process;

  private Mosquitto(Path dir, int port, String scheme, List<String> pubArgs) {
    this.dir = dir;
    this.port = port;
    this.scheme = scheme;
    this.pubArgs = List.copyOf(pubArgs);
  }

  /** Starts an anonymous broker with its config and log in {@code dir}. */
  public static Mosquitto start(Path dir) throws IOException, Unavailable {
    return start(dir, "allow_anonymous true\n", "tcp", List.of());
  }

  /**
   * A broker with {@code config} after its listener line (TLS, passwords), reached as {@code
   * scheme}, and {@code pubArgs} for every mosquitto_pub call (--cafile, -u, -P).
   */
  public static Mosquitto start(Path dir, String config, String scheme, List<String> pubArgs)
      throws IOException, Unavailable {
    String broker = executable("mosquitto");
    String pub = executable("mosquitto_pub");
    if (broker == null || pub == null) {
      throw new Unavailable(
          "mosquitto and mosquitto_pub are needed: apt-get install -y mosquitto mosquitto-clients");
    }
    int port;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = socket.getLocalPort();
    }
    Mosquitto m = new Mosquitto(dir, port, scheme, pubArgs);
    Files.writeString(
        dir.resolve("mosquitto.conf"),
        "listener " + port + " 127.0.0.1\npersistence false\n" + config);
    m.run();
    return m;
  }

  /** (Re)starts the broker process on the same port; retained messages are gone after a restart. */
  void run() throws IOException {
    process =
        new ProcessBuilder(executable("mosquitto"), "-c", dir.resolve("mosquitto.conf").toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("mosquitto.log").toFile())
            .start();
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(20))
        .ignoreExceptions()
        .until(
            () -> {
              if (!process.isAlive()) {
                throw new AssertionError(
                    "mosquitto exited: " + Files.readString(dir.resolve("mosquitto.log")));
              }
              try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
                return true;
              }
            });
  }

  /** Stops the broker process (the test's peer disappears). */
  void stop() throws InterruptedException {
    if (process != null && process.isAlive()) {
      process.destroy();
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
    }
  }

  /** The broker's URL, {@code <scheme>://127.0.0.1:<port>}. */
  public String url() {
    return scheme + "://127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  /** {@code mosquitto_pub -r}: a retained message; an empty payload clears the topic. */
  public void retain(String topic, String payload) throws IOException, InterruptedException {
    List<String> command =
        new ArrayList<>(
            List.of(
                executable("mosquitto_pub"),
                "-h",
                "127.0.0.1",
                "-p",
                "" + port,
                "-q",
                "1",
                "-r",
                "-t",
                topic));
    command.addAll(payload.isEmpty() ? List.of("-n") : List.of("-m", payload));
    command.addAll(pubArgs);
    Process pub = new ProcessBuilder(command).redirectErrorStream(true).start();
    if (!pub.waitFor(10, TimeUnit.SECONDS) || pub.exitValue() != 0) {
      throw new IOException(
          "mosquitto_pub failed: " + new String(pub.getInputStream().readAllBytes()));
    }
  }

  /** Stops the broker. */
  @Override
  public void close() throws InterruptedException {
    stop();
  }

  static String executable(String name) {
    for (String d : List.of("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin")) {
      Path p = Path.of(d, name);
      if (Files.isExecutable(p)) {
        return p.toString();
      }
    }
    String path = System.getenv("PATH");
    if (path != null) {
      for (String d : path.split(":")) {
        Path p = Path.of(d, name);
        if (Files.isExecutable(p)) {
          return p.toString();
        }
      }
    }
    return null;
  }
}
