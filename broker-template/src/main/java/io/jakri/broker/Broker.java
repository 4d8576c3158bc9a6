package io.jakri.broker;

import io.jakri.broker.device.DeviceEnv;
import io.jakri.broker.http.DeviceJson;
import io.jakri.broker.http.DeviceServer;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The broker template's composition root: reads the device env (DESIGN §5), prints what it found,
 * and serves it on {@code GET /device} (and {@code GET /healthz}) until the process is stopped.
 *
 * <p>{@code java -jar jakri-broker-template.jar --print} prints the JSON and exits instead, for
 * trying the contract by hand. Exit codes: 0 ok, 2 bad settings or arguments, 1 port not bindable.
 */
public final class Broker {

  private Broker() {}

  public static void main(String[] args) {
    boolean printOnly = args.length == 1 && args[0].equals("--print");
    if (args.length > 0 && !printOnly) {
      System.err.println("usage: java -jar jakri-broker-template.jar [--print]");
      System.exit(2);
    }
    DeviceEnv devices = DeviceEnv.parse(System.getenv());
    if (printOnly) {
      System.out.print(DeviceJson.render(devices));
      return;
    }
    BrokerSettings settings;
    try {
      settings = BrokerSettings.fromEnv(System.getenv());
    } catch (IllegalArgumentException e) {
      System.err.println("jakri broker: " + e.getMessage());
      System.exit(2);
      return;
    }
    Running running;
    try {
      running = start(settings, devices, System.out);
    } catch (IOException e) {
      System.err.println(
          "jakri broker: cannot listen on port " + settings.port() + ": " + e.getMessage());
      System.exit(1);
      return;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(running::close, "broker-shutdown"));
  }

  /**
   * Logs what the container was given to {@code log} and starts serving it on all interfaces at
   * {@code settings.port()}.
   *
   * @return the running broker; closing it stops the server and its threads
   * @throws IOException when the port cannot be bound
   */
  public static Running start(BrokerSettings settings, DeviceEnv devices, PrintStream log)
      throws IOException {
    log.println(
        "jakri broker: "
            + devices.classes().size()
            + " class grant(s), "
            + devices.instances().size()
            + " Instance grant(s)"
            + (devices.isEmpty() ? "; no device env found (see README: requesting a device)" : ""));
    // JSON-escaped, so device values cannot forge log lines.
    log.print(DeviceJson.render(devices));
    ExecutorService executor = Executors.newFixedThreadPool(2);
    DeviceServer server;
    try {
      server = new DeviceServer(new InetSocketAddress(settings.port()), devices, executor);
    } catch (IOException e) {
      executor.shutdownNow();
      throw e;
    }
    server.start();
    log.println("jakri broker: serving /device and /healthz on port " + server.port());
    return new Running(server, executor);
  }

  /** A started broker. {@link #close()} is idempotent and thread-safe. */
  public static final class Running implements AutoCloseable {
    private final DeviceServer server;
    private final ExecutorService executor;

    private Running(DeviceServer server, ExecutorService executor) {
      this.server = server;
      this.executor = executor;
    }

    /** The port the broker listens on. */
    public int port() {
      return server.port();
    }

    @Override
    public void close() {
      server.close();
      executor.shutdownNow();
    }
  }
}
