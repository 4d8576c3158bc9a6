package io.jakri.handler.modbus;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Real Modbus TCP servers for the integration tests and the bench (from this module's test-jar):
 * Debian's {@code python3-pymodbus} (3.0.x) running {@code modbus-peer.py} (a test resource) with a
 * device identity, on loopback. {@link #create()} throws {@link Unavailable} when no Python with
 * pymodbus is found.
 */
public final class ModbusPeers implements AutoCloseable {

  /** No usable Python with pymodbus on this machine. */
  public static final class Unavailable extends Exception {
    private static final long serialVersionUID = 1L;

    Unavailable(String message) {
      super(message);
    }
  }

  /** One running server. */
  public static final class Peer implements AutoCloseable {
    private final Process process;
    private final int port;

    private Peer(Process process, int port) {
      this.process = process;
      this.port = port;
    }

    public int port() {
      return port;
    }

    /** Stops the server and waits until it has exited (its port is free again). */
    @Override
    public void close() throws IOException {
      try {
        process.getOutputStream().close();
      } catch (IOException e) {
        // gone already
      }
      process.destroy();
      try {
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
          process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private final String python;
  private final Path script;
  private final List<Peer> started = new ArrayList<>();

  private ModbusPeers(String python, Path script) {
    this.python = python;
    this.script = script;
  }

  /** Finds a Python 3 that imports pymodbus (Debian's /usr/bin/python3 first). */
  public static ModbusPeers create() throws Unavailable {
    Path script = script();
    List<String> tried = new ArrayList<>();
    for (String candidate : List.of("/usr/bin/python3", "python3")) {
      try {
        Process p =
            new ProcessBuilder(candidate, "-c", "import pymodbus; print(pymodbus.__version__)")
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0) {
          return new ModbusPeers(candidate, script);
        }
        tried.add(candidate + ": " + out.lines().reduce((a, b) -> b).orElse(""));
      } catch (IOException e) {
        tried.add(candidate + ": " + e.getMessage());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new Unavailable("interrupted");
      }
    }
    throw new Unavailable(
        "no python3 with pymodbus (apt-get install -y python3-pymodbus): " + tried);
  }

  /**
   * Starts a server on 127.0.0.1 and waits until it listens.
   *
   * @param port 0 for a free one
   * @param productName object 0x04, or empty
   */
  public Peer start(
      int port, String vendor, String productCode, String revision, Optional<String> productName)
      throws IOException, TimeoutException {
    List<String> command =
        new ArrayList<>(
            List.of(
                python,
                script.toString(),
                "127.0.0.1",
                Integer.toString(port),
                vendor,
                productCode,
                revision));
    productName.ifPresent(command::add);
    Path log = Files.createTempFile("jakri-modbus-peer-", ".log");
    Process process = new ProcessBuilder(command).redirectError(log.toFile()).start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    CompletableFuture<String> line =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return out.readLine();
              } catch (IOException e) {
                return null;
              }
            });
    String first;
    try {
      first = line.get(30, TimeUnit.SECONDS);
    } catch (InterruptedException | ExecutionException | TimeoutException e) {
      process.destroyForcibly();
      throw new TimeoutException("pymodbus peer did not start: " + Files.readString(log));
    }
    if (first == null || !first.startsWith("LISTENING ")) {
      process.destroyForcibly();
      throw new IOException("pymodbus peer failed: " + first + " " + Files.readString(log));
    }
    Peer peer = new Peer(process, Integer.parseInt(first.substring("LISTENING ".length()).strip()));
    started.add(peer);
    return peer;
  }

  /**
   * {@code modbus-peer.py}: the test resource itself, or, when it is inside a jar (the bench uses
   * this module's test-jar), a copy in a temp file.
   */
  private static Path script() throws Unavailable {
    var url = ModbusPeers.class.getResource("/modbus-peer.py");
    if (url == null) {
      throw new Unavailable("modbus-peer.py is not on the class path");
    }
    try {
      if ("file".equals(url.getProtocol())) {
        return Path.of(url.toURI());
      }
      Path copy = Files.createTempFile("jakri-modbus-peer-", ".py");
      copy.toFile().deleteOnExit();
      try (InputStream in = url.openStream()) {
        Files.copy(in, copy, StandardCopyOption.REPLACE_EXISTING);
      }
      return copy;
    } catch (URISyntaxException | IOException e) {
      throw new Unavailable("modbus-peer.py not readable: " + e);
    }
  }

  @Override
  public void close() throws IOException {
    for (Peer peer : started) {
      peer.close();
    }
  }
}
