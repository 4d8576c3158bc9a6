package io.jakri.handler.modbus;

import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Bench figures of the modbus handler against a real pymodbus server ({@link ModbusPeers}), each
 * next to its floor, printed as {@code BENCH name median unit (floor median)}. Run from the
 * module's test class path (see the README); not part of the test suite.
 *
 * <ul>
 *   <li>{@code modbus_start_to_reported_ms}: server up, a new discovery started ({@code start}
 *       called) until the handler reports the device. Floor: a bare blocking socket in this JVM
 *       that connects and makes the same 43/14 request (regular objects), until the whole reply is
 *       read.
 *   <li>{@code modbus_server_up_to_reported_ms}: a discovery already scanning every second, the
 *       server started; from the server listening until the device is reported. Includes waiting
 *       for the next scan (uniform in [0, 1 s]); same floor.
 * </ul>
 */
public final class ModbusBench {

  private ModbusBench() {}

  /** Notes when the first snapshot, and the first non-empty one, arrive. */
  private static final class Timing implements io.jakri.handler.DeviceListener {
    final java.util.concurrent.CountDownLatch first = new java.util.concurrent.CountDownLatch(1);
    final java.util.concurrent.CountDownLatch found = new java.util.concurrent.CountDownLatch(1);
    volatile long foundNanos;

    @Override
    public void devices(List<io.jakri.handler.DiscoveredDevice> devices) {
      first.countDown();
      if (!devices.isEmpty() && found.getCount() > 0) {
        foundNanos = System.nanoTime();
        found.countDown();
      }
    }

    @Override
    public void failed(String reason, Throwable cause) {}

    long awaitFound() throws InterruptedException {
      if (!found.await(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("not reported in 10 s");
      }
      return foundNanos;
    }
  }

  public static void main(String[] args) throws Exception {
    int runs = args.length > 0 ? Integer.parseInt(args[0]) : 30;
    int upRuns = args.length > 1 ? Integer.parseInt(args[1]) : 8;
    ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);
    try (ModbusPeers peers = ModbusPeers.create()) {
      ModbusPeers.Peer server = peers.start(0, "Acme", "AC-100", "1.0", Optional.of("Bench"));
      int port = server.port();
      for (int i = 0; i < 10; i++) {
        startToReported(scheduler, port, "warm" + i);
        bare(port);
      }
      List<Double> handler = new ArrayList<>();
      List<Double> floor = new ArrayList<>();
      for (int i = 0; i < runs; i++) {
        handler.add(startToReported(scheduler, port, "run" + i));
        floor.add(bare(port));
      }
      print("modbus_start_to_reported_ms", handler, floor);

      List<Double> transport = new ArrayList<>();
      List<Double> transportFloor = new ArrayList<>();
      try (NioTransport nio = new NioTransport(scheduler)) {
        ModbusTransport.Query query =
            new ModbusTransport.Query(
                "127.0.0.1", List.of(1), false, java.time.Duration.ofSeconds(1));
        InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
        for (int i = 0; i < runs + 10; i++) {
          long start = System.nanoTime();
          nio.identify(address, query).get(10, TimeUnit.SECONDS);
          if (i >= 10) {
            transport.add((System.nanoTime() - start) / 1e6);
            transportFloor.add(bare(port));
          }
        }
      }
      print("modbus_transport_identify_ms", transport, transportFloor);

      List<Double> up = new ArrayList<>();
      List<Double> upFloor = new ArrayList<>();
      server.close();
      for (int i = 0; i < upRuns; i++) {
        Timing listener = new Timing();
        Discovery discovery =
            new ModbusHandler()
                .start(context(scheduler, port, "up" + i, "scanIntervalSeconds: 1\n"), listener);
        listener.first.await(10, TimeUnit.SECONDS);
        // A random phase against the 1 s scans (python's start-up time is nearly constant and
        // would otherwise fix it): not synchronisation, the figure's wait is meant to be uniform.
        Thread.sleep(java.util.concurrent.ThreadLocalRandom.current().nextLong(1000));
        ModbusPeers.Peer restarted =
            peers.start(port, "Acme", "AC-100", "1." + i, Optional.empty());
        long listening = System.nanoTime();
        up.add((listener.awaitFound() - listening) / 1e6);
        discovery.close();
        upFloor.add(bare(port));
        restarted.close();
      }
      print("modbus_server_up_to_reported_ms", up, upFloor);
    } finally {
      scheduler.shutdownNow();
    }
  }

  private static DiscoveryContext context(
      ScheduledExecutorService scheduler, int port, String name, String extra) {
    return new DiscoveryContext(
        "bench-" + name,
        "node-bench",
        "addresses: [127.0.0.1]\nports: [" + port + "]\nunitIds: [1]\n" + extra,
        Map.of(),
        scheduler);
  }

  private static double startToReported(ScheduledExecutorService scheduler, int port, String name)
      throws Exception {
    Timing listener = new Timing();
    long start = System.nanoTime();
    Discovery discovery = new ModbusHandler().start(context(scheduler, port, name, ""), listener);
    double ms = (listener.awaitFound() - start) / 1e6;
    discovery.close();
    return ms;
  }

  /** The floor: connect, one 43/14 request, read the whole reply, close. */
  static double bare(int port) throws Exception {
    long start = System.nanoTime();
    try (Socket socket = new Socket()) {
      socket.setTcpNoDelay(true);
      socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
      socket.setSoTimeout(1000);
      OutputStream out = socket.getOutputStream();
      InputStream in = socket.getInputStream();
      out.write(DeviceIdCodec.request(1, 1, DeviceIdCodec.ReadCode.REGULAR, 0));
      byte[] header = in.readNBytes(7);
      int length = ((header[4] & 0xFF) << 8) | (header[5] & 0xFF);
      in.readNBytes(length - 1);
    }
    return (System.nanoTime() - start) / 1e6;
  }

  private static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  private static void print(String name, List<Double> values, List<Double> floor) {
    System.out.printf(
        "BENCH %s %.2f ms (floor %.2f ms; n=%d; min %.2f max %.2f)%n",
        name,
        median(values),
        median(floor),
        values.size(),
        Collections.min(values),
        Collections.max(values));
  }
}
