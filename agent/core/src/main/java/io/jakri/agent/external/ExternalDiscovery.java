package io.jakri.agent.external;

import io.grpc.ConnectivityState;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.InvalidDetailsException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import v0.Discovery.DiscoverRequest;
import v0.Discovery.DiscoverResponse;
import v0.DiscoveryHandlerGrpc;

/**
 * One Configuration's discovery through an external handler: a {@code Discover} stream per endpoint
 * registered under the handler's name, merged as Akri merges them — the union of every endpoint's
 * latest snapshot, a device id reported by several endpoints counted once (the endpoint registered
 * first wins).
 *
 * <p>Each {@code DiscoverResponse} is a full snapshot of its endpoint. A stream that fails or ends
 * is dialled again with backoff (250 ms doubling to 5 s) while the endpoint's devices stay; a
 * re-registration dials at once; after {@link ExternalHandlers.Settings#dropAfter} of failures the
 * endpoint is dropped and its devices leave the snapshot (unhealthy, then gone after the grace). An
 * endpoint that stops answering fails too: its open stream by unanswered keepalive PINGs (set on
 * the channel), a new dial by a connection that has not answered the HTTP/2 handshake after {@link
 * ExternalHandlers.Settings#keepaliveTimeout} (a frozen process's socket still accepts). An {@code
 * InvalidArgument} answer is the handler refusing the details: while starting, {@link #start}
 * throws; later, the discovery reports failure and the restart finds it invalid.
 */
final class ExternalDiscovery implements Discovery, ExternalHandlers.EndpointListener {

  private static final Logger LOG = LoggerFactory.getLogger(ExternalDiscovery.class);

  private final String name;
  private final String configuration;
  private final ExternalHandlers handlers;
  private final DiscoverRequest request;
  private final DeviceListener listener;
  private final Map<String, EndpointStream> streams = new LinkedHashMap<>();
  private final Map<String, List<DiscoveredDevice>> snapshots = new LinkedHashMap<>();
  private boolean started;
  private boolean closed;

  ExternalDiscovery(
      String name,
      String configuration,
      ExternalHandlers handlers,
      DiscoverRequest request,
      DeviceListener listener) {
    this.name = name;
    this.configuration = configuration;
    this.handlers = handlers;
    this.request = request;
    this.listener = listener;
  }

  /** Opens a stream per endpoint and waits (bounded) for their first answers. */
  void start() throws InvalidDetailsException {
    List<EndpointStream> opened = new ArrayList<>();
    synchronized (this) {
      for (ExternalEndpoint endpoint : handlers.subscribe(name, this)) {
        opened.add(open(endpoint));
      }
    }
    long deadline = handlers.nanoTime().getAsLong() + handlers.settings().firstAnswer().toNanos();
    for (EndpointStream s : opened) {
      long left = deadline - handlers.nanoTime().getAsLong();
      try {
        if (left > 0) {
          s.firstAnswer.await(left, TimeUnit.NANOSECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    synchronized (this) {
      started = true;
      for (EndpointStream s : opened) {
        if (s.invalid != null) {
          String message =
              "handler "
                  + name
                  + " at "
                  + s.endpoint.endpoint()
                  + " refused the discoveryDetails (InvalidArgument): "
                  + s.invalid;
          closeLocked();
          throw new InvalidDetailsException(message);
        }
      }
    }
  }

  private EndpointStream open(ExternalEndpoint endpoint) {
    EndpointStream s = new EndpointStream(endpoint);
    streams.put(endpoint.key(), s);
    s.dial();
    return s;
  }

  @Override
  public synchronized void registered(ExternalEndpoint endpoint, boolean again) {
    if (closed) {
      return;
    }
    EndpointStream s = streams.get(endpoint.key());
    if (s == null) {
      open(endpoint);
    } else if (s.failing()) {
      LOG.info(
          "configuration {}: handler {} at {} registered again; dialling it now",
          configuration,
          name,
          endpoint.endpoint());
      s.failures.resetBackoff();
      s.dial();
    }
  }

  @Override
  public synchronized void dropped(ExternalEndpoint endpoint) {
    EndpointStream s = streams.get(endpoint.key());
    if (s == null || !s.endpoint.equals(endpoint)) {
      return;
    }
    streams.remove(endpoint.key());
    s.stop();
    if (snapshots.remove(endpoint.key()) != null && !closed) {
      publish();
    }
  }

  @Override
  public void close() {
    handlers.unsubscribe(name, this);
    synchronized (this) {
      closeLocked();
    }
  }

  private void closeLocked() {
    closed = true;
    streams.values().forEach(EndpointStream::stop);
    streams.clear();
    snapshots.clear();
  }

  /** Reports the union of the endpoints' snapshots (first endpoint wins on equal ids). */
  private void publish() {
    Map<String, DiscoveredDevice> merged = new LinkedHashMap<>();
    for (List<DiscoveredDevice> devices : snapshots.values()) {
      for (DiscoveredDevice d : devices) {
        merged.putIfAbsent(d.id(), d);
      }
    }
    listener.devices(List.copyOf(merged.values()));
  }

  /** The stream to one endpoint; guarded by the discovery's lock. */
  private final class EndpointStream {
    final ExternalEndpoint endpoint;
    final CountDownLatch firstAnswer = new CountDownLatch(1);
    final StreamFailures failures = new StreamFailures(handlers.settings().dropAfter());
    volatile String invalid;
    long generation;
    ClientCallStreamObserver<DiscoverRequest> call;
    ScheduledFuture<?> retry;
    ScheduledFuture<?> silence;
    ScheduledFuture<?> handshake;

    EndpointStream(ExternalEndpoint endpoint) {
      this.endpoint = endpoint;
    }

    boolean failing() {
      return failures.failing();
    }

    void dial() {
      cancelTimers();
      if (call != null) {
        call.cancel("dialling again", null);
        call = null;
      }
      Optional<ManagedChannel> channel = handlers.channel(endpoint);
      if (channel.isEmpty()) {
        return; // dropped meanwhile
      }
      // This class paces the dials; the channel's own reconnect backoff would fail them fast.
      channel.get().resetConnectBackoff();
      long gen = ++generation;
      boolean[] answered = {false};
      ManagedChannel dialled = channel.get();
      // Not in the caller's gRPC Context: a re-registration dials from inside the Register call,
      // whose Context is cancelled as soon as it answers, and would cancel this stream with it.
      Context previous = Context.ROOT.attach();
      try {
        DiscoveryHandlerGrpc.newStub(dialled)
            .discover(
                request,
                new ClientResponseObserver<DiscoverRequest, DiscoverResponse>() {
                  @Override
                  public void beforeStart(ClientCallStreamObserver<DiscoverRequest> requestStream) {
                    synchronized (ExternalDiscovery.this) {
                      if (gen == generation) {
                        call = requestStream;
                      }
                    }
                  }

                  @Override
                  public void onNext(DiscoverResponse response) {
                    List<DiscoveredDevice> devices =
                        DiscoverResponses.devices(
                            response, endpoint.shared(), configuration, endpoint);
                    synchronized (ExternalDiscovery.this) {
                      if (gen != generation || closed) {
                        return;
                      }
                      if (!answered[0]) {
                        answered[0] = true;
                        if (failing()) {
                          LOG.info(
                              "configuration {}: handler {} at {} answers again",
                              configuration,
                              name,
                              endpoint.endpoint());
                        }
                      }
                      failures.answered();
                      snapshots.put(endpoint.key(), devices);
                      publish();
                    }
                    firstAnswer.countDown();
                  }

                  @Override
                  public void onError(Throwable t) {
                    ended(gen, Status.fromThrowable(t));
                  }

                  @Override
                  public void onCompleted() {
                    ended(gen, Status.UNAVAILABLE.withDescription("the handler ended the stream"));
                  }
                });
      } finally {
        Context.ROOT.detach(previous);
      }
      long warnAfter = handlers.settings().silentWarning().toMillis();
      silence =
          handlers
              .scheduler()
              .schedule(
                  () -> {
                    synchronized (ExternalDiscovery.this) {
                      // a connection still in its handshake is the handshake check's to report
                      if (gen == generation
                          && !answered[0]
                          && !closed
                          && dialled.getState(false) == ConnectivityState.READY) {
                        LOG.warn(
                            "configuration {}: handler {} at {} has not answered Discover in {}"
                                + " ms; still waiting",
                            configuration,
                            name,
                            endpoint.endpoint(),
                            warnAfter);
                      }
                    }
                  },
                  warnAfter,
                  TimeUnit.MILLISECONDS);
      long handshakeMs = handlers.settings().keepaliveTimeout().toMillis();
      handshake =
          handlers
              .scheduler()
              .schedule(
                  () -> unanswered(gen, answered, dialled, handshakeMs),
                  handshakeMs,
                  TimeUnit.MILLISECONDS);
    }

    /**
     * A dial whose connection has not answered the HTTP/2 handshake in time fails like a dropped
     * stream (the call is still waiting in the channel, never sent): a frozen process's socket
     * accepts connections, and without a stream no keepalive PING would notice.
     */
    private void unanswered(
        long gen, boolean[] answered, ManagedChannel dialled, long handshakeMs) {
      ClientCallStreamObserver<DiscoverRequest> waiting;
      synchronized (ExternalDiscovery.this) {
        if (gen != generation
            || closed
            || call == null
            || answered[0]
            || dialled.getState(false) == ConnectivityState.READY) {
          return;
        }
        waiting = call;
        call = null; // its CANCELLED is ours, not a failure
      }
      waiting.cancel("no HTTP/2 answer", null);
      ended(
          gen,
          Status.UNAVAILABLE.withDescription(
              "no answer to the HTTP/2 handshake in "
                  + handshakeMs
                  + " ms (process frozen or host unreachable?)"));
    }

    private void ended(long gen, Status status) {
      ExternalEndpoint toDrop = null;
      String dropReason = null;
      String failure = null;
      synchronized (ExternalDiscovery.this) {
        if (gen != generation
            || closed
            || status.getCode() == Status.Code.CANCELLED && call == null) {
          firstAnswer.countDown();
          return;
        }
        call = null;
        String description = describe(status);
        if (status.getCode() == Status.Code.INVALID_ARGUMENT) {
          invalid = status.getDescription() == null ? "" : status.getDescription();
          if (started) {
            failure =
                "handler "
                    + name
                    + " at "
                    + endpoint.endpoint()
                    + " refused the discoveryDetails (InvalidArgument): "
                    + invalid;
          }
        } else {
          StreamFailures.Next next = failures.failed(handlers.nanoTime().getAsLong(), description);
          if (next instanceof StreamFailures.Drop drop) {
            toDrop = endpoint;
            dropReason = drop.reason();
          } else {
            long delay = ((StreamFailures.Retry) next).delayMs();
            LOG.warn(
                "configuration {}: handler {} at {}: {}; dialling again in {} ms",
                configuration,
                name,
                endpoint.endpoint(),
                description,
                delay);
            cancelTimers();
            retry =
                handlers
                    .scheduler()
                    .schedule(
                        () -> {
                          synchronized (ExternalDiscovery.this) {
                            if (!closed && streams.get(endpoint.key()) == this) {
                              dial();
                            }
                          }
                        },
                        delay,
                        TimeUnit.MILLISECONDS);
          }
        }
      }
      firstAnswer.countDown();
      if (failure != null) {
        listener.failed(failure, null);
      }
      if (toDrop != null) {
        handlers.drop(toDrop, dropReason);
      }
    }

    void stop() {
      generation++;
      cancelTimers();
      if (call != null) {
        call.cancel("discovery stopped", null);
        call = null;
      }
      firstAnswer.countDown();
    }

    private void cancelTimers() {
      if (retry != null) {
        retry.cancel(false);
        retry = null;
      }
      if (silence != null) {
        silence.cancel(false);
        silence = null;
      }
      if (handshake != null) {
        handshake.cancel(false);
        handshake = null;
      }
    }
  }

  private static String describe(Status status) {
    return status.getCode()
        + (status.getDescription() == null ? "" : ": " + status.getDescription())
        + (status.getCause() == null ? "" : " (" + status.getCause() + ")");
  }
}
