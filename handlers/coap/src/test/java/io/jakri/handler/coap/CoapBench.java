package io.jakri.handler.coap;

import static org.awaitility.Awaitility.await;

import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.testkit.RecordingListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Server up → device reported, next to its floor: a {@code coap-server-notls} is started on a fresh
 * loopback port while the handler polls it (unicast, rounds every {@code discoveryIntervalSeconds}
 * = 1) and {@code coap-client-notls} asks for {@code /.well-known/core} in a loop; both are timed
 * from the server's start. Prints one {@code BENCH} line per figure (medians). Not part of the
 * build: {@code bench/} needs the installed agent, so this runs from the module's test classpath
 * (see README.md).
 */
public final class CoapBench {

  private CoapBench() {}

  public static void main(String[] args) throws Exception {
    int runs = args.length > 0 ? Integer.parseInt(args[0]) : 5;
    List<Long> handler = new ArrayList<>();
    List<Long> floor = new ArrayList<>();
    ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);
    try (CoapPeers peers = CoapPeers.start()) {
      for (int run = 0; run < runs; run++) {
        int port = CoapPeers.freePort();
        String id = "127.0.0.1:" + port;
        RecordingListener listener = new RecordingListener();
        Discovery discovery =
            new CoapHandler()
                .start(
                    new DiscoveryContext(
                        "bench",
                        "node",
                        "multicast: false\nhosts: [\""
                            + id
                            + "\"]\ndiscoveryIntervalSeconds: 1\nresponseTimeoutMillis: 300\n",
                        Map.of(),
                        scheduler),
                    listener);
        try (CoapPeers.Peer server =
            peers.spawn(CoapPeers.SERVER, "-A", "127.0.0.1", "-p", "" + port)) {
          long[] seen = {0, 0};
          await()
              .atMost(Duration.ofSeconds(30))
              .pollInterval(Duration.ofMillis(1))
              .until(
                  () -> {
                    if (seen[0] == 0 && listener.lastIds().contains(id)) {
                      seen[0] = System.nanoTime();
                    }
                    if (seen[1] == 0
                        && peers.get("coap://" + id + "/.well-known/core").contains("</")) {
                      seen[1] = System.nanoTime();
                    }
                    return seen[0] != 0 && seen[1] != 0;
                  });
          handler.add(TimeUnit.NANOSECONDS.toMillis(seen[0] - server.startedNanos));
          floor.add(TimeUnit.NANOSECONDS.toMillis(seen[1] - server.startedNanos));
        } finally {
          discovery.close();
        }
      }
    } finally {
      scheduler.shutdownNow();
    }
    long h = median(handler);
    long f = median(floor);
    System.out.println("runs handler=" + handler + " coap-client=" + floor);
    System.out.println("BENCH coap_server_up_to_device " + h + " ms");
    System.out.println("BENCH coap_server_up_to_device_floor " + f + " ms");
    System.out.printf("BENCH coap_server_up_to_device_ratio %.1f x%n", (double) h / Math.max(1, f));
  }

  private static long median(List<Long> values) {
    List<Long> sorted = new ArrayList<>(values);
    sorted.sort(null);
    return sorted.get(sorted.size() / 2);
  }
}
