package io.jakri.agent.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.StreamObserver;
import io.jakri.kubelet.v1beta1.Empty;
import io.jakri.kubelet.v1beta1.RegisterRequest;
import io.jakri.kubelet.v1beta1.RegistrationGrpc;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A slow kubelet (it answers one Register at a time, each after {@link #DELAY}) appears after a big
 * Configuration's resources are already served and waiting for it; then a small Configuration's
 * resources are served. Registration stays bounded in flight ({@link DevicePluginManager#IN_FLIGHT}
 * Registers at most at the kubelet, retries included) and fair: the small Configuration is
 * registered within a few rounds, long before the big one is done. Before the fix every waiting
 * resource's retry went straight to the kubelet, so the small one queued behind all of them; a
 * kubelet restart sent every resource's Register at once. Prints {@code REGISTER_FAIRNESS …}.
 */
class RegistrationFairnessIT {

  static final int BIG = 400;
  static final Duration DELAY = Duration.ofMillis(20);

  @TempDir Path tmp;
  Path dir;
  EventLoopGroup group;
  ExecutorService grpc;
  ScheduledExecutorService scheduler;
  DevicePluginManager manager;
  SlowKubelet kubelet;

  @BeforeEach
  @SuppressWarnings("deprecation")
  void setUp() {
    dir = tmp.resolve("device-plugins");
    group = new EpollEventLoopGroup(2);
    grpc = Executors.newFixedThreadPool(8);
    scheduler = Executors.newScheduledThreadPool(1);
    manager = new DevicePluginManager(dir, group, grpc, scheduler, Clock.systemUTC());
    manager.start();
  }

  @AfterEach
  void tearDown() throws Exception {
    manager.close();
    if (kubelet != null) {
      kubelet.close();
    }
    scheduler.shutdownNow();
    grpc.shutdownNow();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
  }

  @Test
  void aSmallConfigurationIsRegisteredWithinRoundsWhileABigOneWaitsForASlowKubelet()
      throws Exception {
    for (int i = 0; i < BIG; i++) {
      manager.serve(new DevicePluginManagerIT.OneDevice("big.jakri.io/b-" + i, "big-" + i));
    }
    // A quick kubelet registers them all; then it restarts as a slow one, and every resource must
    // register again.
    Path socket = dir.resolve("kubelet.sock");
    kubelet = new SlowKubelet(socket, Duration.ZERO);
    await().atMost(Duration.ofSeconds(60)).until(() -> kubelet.bigRegistered.get() == BIG);
    kubelet.close();
    java.nio.file.Files.deleteIfExists(socket);

    long kubeletStart = System.nanoTime();
    kubelet = new SlowKubelet(socket, DELAY);
    await().atMost(Duration.ofSeconds(60)).until(() -> kubelet.answered.get() >= 10);

    long smallServed = System.nanoTime();
    manager.serve(new DevicePluginManagerIT.OneDevice("small.jakri.io/s-0", "small-s-0"));
    manager.serve(new DevicePluginManagerIT.OneDevice("other.jakri.io/t-0", "small-t-0"));
    await()
        .atMost(Duration.ofSeconds(120))
        .until(
            () ->
                kubelet.registeredAt.containsKey("small.jakri.io/s-0")
                    && kubelet.registeredAt.containsKey("other.jakri.io/t-0"));
    int bigDoneWhenSmallWas = kubelet.bigRegistered.get();
    long smallMs =
        TimeUnit.NANOSECONDS.toMillis(
            Math.max(
                    kubelet.registeredAt.get("small.jakri.io/s-0"),
                    kubelet.registeredAt.get("other.jakri.io/t-0"))
                - smallServed);
    await()
        .atMost(Duration.ofSeconds(120))
        .until(() -> kubelet.bigRegistered.get() == BIG && manager.allRegistered());
    long allMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - kubeletStart);

    System.out.printf(
        "REGISTER_FAIRNESS big=%d register_delay_ms=%d small_registered_ms=%d"
            + " big_registered_before_small=%d big_all_registered_ms=%d max_in_flight=%d"
            + " registers=%d%n",
        BIG,
        DELAY.toMillis(),
        smallMs,
        bigDoneWhenSmallWas,
        allMs,
        kubelet.maxInFlight.get(),
        kubelet.answered.get());
    assertThat(kubelet.maxInFlight.get())
        .as("Registers at the kubelet at once")
        .isLessThanOrEqualTo(DevicePluginManager.IN_FLIGHT);
    // Fair: the small ones went in within a few rounds of the queue, not after the big one.
    assertThat(bigDoneWhenSmallWas)
        .as("big resources registered before the small ones")
        .isLessThan(BIG / 2);
    // Each resource registered once: no retry pile-up.
    assertThat(kubelet.answered.get()).isLessThan(BIG + 2 + DevicePluginManager.IN_FLIGHT);
  }

  /** A kubelet Registration service that answers one Register at a time, each after a delay. */
  static final class SlowKubelet implements AutoCloseable {
    final Map<String, Long> registeredAt = new ConcurrentHashMap<>();
    final AtomicInteger bigRegistered = new AtomicInteger();
    final AtomicInteger answered = new AtomicInteger();
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger maxInFlight = new AtomicInteger();
    private final AtomicLong nextAnswer = new AtomicLong();
    private final ScheduledExecutorService answers = Executors.newSingleThreadScheduledExecutor();
    private final EventLoopGroup loop;
    private final Server server;

    @SuppressWarnings("deprecation")
    SlowKubelet(Path socket, Duration delay) throws Exception {
      loop = new EpollEventLoopGroup(1);
      server =
          NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
              .channelType(EpollServerDomainSocketChannel.class)
              .bossEventLoopGroup(loop)
              .workerEventLoopGroup(loop)
              .addService(
                  new RegistrationGrpc.RegistrationImplBase() {
                    @Override
                    public void register(RegisterRequest request, StreamObserver<Empty> out) {
                      maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                      long now = System.nanoTime();
                      long at;
                      synchronized (nextAnswer) {
                        at = Math.max(nextAnswer.get(), now) + delay.toNanos();
                        nextAnswer.set(at);
                      }
                      answers.schedule(
                          () -> {
                            inFlight.decrementAndGet();
                            answered.incrementAndGet();
                            if (registeredAt.putIfAbsent(
                                        request.getResourceName(), System.nanoTime())
                                    == null
                                && request.getResourceName().startsWith("big.")) {
                              bigRegistered.incrementAndGet();
                            }
                            out.onNext(Empty.getDefaultInstance());
                            out.onCompleted();
                          },
                          at - now,
                          TimeUnit.NANOSECONDS);
                    }
                  })
              .build()
              .start();
    }

    @Override
    public void close() throws Exception {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      answers.shutdownNow();
      loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
  }
}
