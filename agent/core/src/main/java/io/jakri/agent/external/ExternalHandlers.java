package io.jakri.agent.external;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.jakri.agent.discovery.HandlerRegistry;
import io.jakri.handler.DiscoveryHandler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import v0.Discovery.RegisterDiscoveryHandlerRequest;

/**
 * External discovery handlers speaking Akri's protocol: serves {@code v0.Registration} on {@code
 * <dir>/agent-registration.sock} and presents every registered handler name as a {@link
 * DiscoveryHandler} ({@link ExternalHandler}), so Configurations use it exactly like a plugin.
 *
 * <ul>
 *   <li>Several endpoints may register under one name (several handler pods on a node); a discovery
 *       streams from each and merges their snapshots (see {@link ExternalDiscovery}). Akri's
 *       identity of an endpoint is its name and endpoint: registering the same pair again is a
 *       re-registration, and a stream that had dropped is dialled again at once.
 *   <li>Registrations are kept in {@code <dir>/}{@value RegistrationFile#FILE_NAME} and dialled
 *       again after an agent restart.
 *   <li>An endpoint whose stream fails for longer than {@link Settings#dropAfter} is dropped: its
 *       devices turn unhealthy (and leave after the offline grace). A name without endpoints is no
 *       handler any more. An endpoint that stays connected but stops answering (its process frozen,
 *       its host unreachable) fails its stream by not answering gRPC keepalive PINGs ({@link
 *       Settings#keepalive}) or a new connection's HTTP/2 handshake, so it is dropped within {@link
 *       Settings#dropBound}.
 *   <li>Bounded: registrations are rate-limited ({@link Settings#registrationsPerSecond}), at most
 *       {@value #MAX_ENDPOINTS} endpoints, messages of at most {@value #MAX_MESSAGE_BYTES} bytes.
 * </ul>
 *
 * <p>All gRPC servers and channels run on the agent's one Netty event loop group. The socket and
 * its service are {@link RegistrationSocket} and {@link RegistrationService}; the endpoints by
 * name, with their channels and subscribers, are kept in an {@link EndpointTable}.
 */
public final class ExternalHandlers implements HandlerRegistry, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ExternalHandlers.class);

  /** Akri's name of the registration socket inside the discovery-handlers directory. */
  public static final String SOCKET_NAME = "agent-registration.sock";

  /** Akri's env var naming the discovery-handlers directory. */
  public static final String DIRECTORY_ENV = "DISCOVERY_HANDLERS_DIRECTORY";

  /** Akri's default discovery-handlers directory. */
  public static final Path DEFAULT_DIRECTORY = Path.of("/var/lib/akri");

  /** Most endpoints registered at once (all names together). */
  public static final int MAX_ENDPOINTS = 256;

  /** Largest gRPC message accepted from a handler or a registering process. */
  public static final int MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

  /**
   * Timing of external handlers.
   *
   * @param dropAfter how long an endpoint's stream may keep failing before it is dropped
   * @param firstAnswer how long a discovery's start waits for each endpoint's first answer (an
   *     {@code InvalidArgument} in that time makes the Configuration invalid)
   * @param silentWarning after how long without a first answer a warning is logged
   * @param registrationsPerSecond registrations accepted per second (burst: twice that)
   * @param keepalive how long a Discover stream may be silent before the agent sends an HTTP/2 PING
   *     on its connection (gRPC keepalive, only while a stream is open; gRPC's floor is 10 s)
   * @param keepaliveTimeout how long a PING may go unanswered before the connection counts as gone,
   *     and how long a new connection may take to answer the HTTP/2 handshake
   */
  public record Settings(
      Duration dropAfter,
      Duration firstAnswer,
      Duration silentWarning,
      int registrationsPerSecond,
      Duration keepalive,
      Duration keepaliveTimeout) {

    /** gRPC's smallest keepalive time: shorter ones are raised to it. */
    public static final Duration MIN_KEEPALIVE = Duration.ofSeconds(10);

    /** Default time between keepalive PINGs on a silent stream. */
    public static final Duration DEFAULT_KEEPALIVE = Duration.ofSeconds(30);

    /** Default time a PING (or a new connection's handshake) may go unanswered. */
    public static final Duration DEFAULT_KEEPALIVE_TIMEOUT = Duration.ofSeconds(10);

    public static final Settings DEFAULT =
        new Settings(Duration.ofSeconds(30), Duration.ofSeconds(3), Duration.ofSeconds(30), 20);

    public Settings {
      if (keepalive.compareTo(MIN_KEEPALIVE) < 0) {
        keepalive = MIN_KEEPALIVE;
      }
      if (keepaliveTimeout.isNegative() || keepaliveTimeout.isZero()) {
        throw new IllegalArgumentException("keepaliveTimeout must be positive");
      }
    }

    /** The default keepalive. */
    public Settings(
        Duration dropAfter,
        Duration firstAnswer,
        Duration silentWarning,
        int registrationsPerSecond) {
      this(
          dropAfter,
          firstAnswer,
          silentWarning,
          registrationsPerSecond,
          DEFAULT_KEEPALIVE,
          DEFAULT_KEEPALIVE_TIMEOUT);
    }

    /** These settings with another keepalive time. */
    public Settings withKeepalive(Duration time) {
      return new Settings(
          dropAfter, firstAnswer, silentWarning, registrationsPerSecond, time, keepaliveTimeout);
    }

    /**
     * The longest a stream to an endpoint that stops answering can last before the endpoint is
     * dropped: the keepalive time, the PING's timeout and {@link #dropAfter} of failed dials.
     */
    public Duration dropBound() {
      return keepalive.plus(keepaliveTimeout).plus(dropAfter).plus(keepaliveTimeout);
    }
  }

  /** Where external handlers register ({@code directory}) and their timing. */
  public record Options(Path directory, Settings settings) {
    public Options(Path directory) {
      this(directory, Settings.DEFAULT);
    }
  }

  /** Told about endpoints of one name coming and going. Called outside any lock. */
  interface EndpointListener {
    /** A new endpoint, or ({@code again}) one registering again. */
    void registered(ExternalEndpoint endpoint, boolean again);

    void dropped(ExternalEndpoint endpoint);
  }

  private final Path directory;
  private final Path socket;
  private final EventLoopGroup group;
  private final Executor executor;
  private final ScheduledExecutorService scheduler;
  private final Settings settings;
  private final LongSupplier nanoTime;
  private final RegistrationFile file;
  private final EndpointTable table;
  private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
  private final RegistrationSocket registration;
  private final RegistrationService service;
  private volatile boolean closed;
  private volatile PropertyBytes propertyBytes = configuration -> Optional.empty();

  /**
   * A Configuration's {@code discoveryProperties} as bytes (cluster mode: Secrets and ConfigMap
   * {@code binaryData} as stored); empty when only their text is known (then it is sent as UTF-8).
   */
  @FunctionalInterface
  public interface PropertyBytes {
    Optional<Map<String, byte[]>> of(String configuration) throws Exception;
  }

  /** Where discovery properties are read as bytes from (set before Configurations start). */
  public void usePropertyBytes(PropertyBytes source) {
    this.propertyBytes = source;
  }

  PropertyBytes propertyBytes() {
    return propertyBytes;
  }

  public ExternalHandlers(
      Path directory,
      EventLoopGroup group,
      Executor executor,
      ScheduledExecutorService scheduler,
      Settings settings,
      LongSupplier nanoTime) {
    this.directory = directory.toAbsolutePath().normalize();
    this.socket = this.directory.resolve(SOCKET_NAME);
    this.group = group;
    this.executor = executor;
    this.scheduler = scheduler;
    this.settings = settings;
    this.nanoTime = nanoTime;
    this.file = new RegistrationFile(this.directory);
    this.table = new EndpointTable(MAX_ENDPOINTS, name -> new ExternalHandler(name, this));
    this.registration = new RegistrationSocket(socket, group, executor);
    this.service =
        new RegistrationService(
            this.directory, settings.registrationsPerSecond(), nanoTime, this::register);
  }

  /** The discovery-handlers directory. */
  public Path directory() {
    return directory;
  }

  /** The registration socket. */
  public Path socket() {
    return socket;
  }

  Settings settings() {
    return settings;
  }

  ScheduledExecutorService scheduler() {
    return scheduler;
  }

  LongSupplier nanoTime() {
    return nanoTime;
  }

  /**
   * Takes back the saved registrations and serves the registration socket (removing a stale one
   * first). Refuses (IOException) a directory whose socket answers: another agent serves it.
   */
  public void start() throws IOException {
    Files.createDirectories(directory);
    registration.removeStale();
    for (RegisterDiscoveryHandlerRequest saved : file.load()) {
      // A Unix socket that is gone is a handler that is gone; a NETWORK one is dialled to know.
      ExternalEndpoint.Checked checked = ExternalEndpoint.check(saved, directory, true);
      if (checked instanceof ExternalEndpoint.Accepted a) {
        register(a.endpoint(), "restored from " + file.path().getFileName());
      } else if (checked instanceof ExternalEndpoint.Refused r) {
        LOG.warn("saved registration not restored: {}", r.reason());
      }
    }
    registration.serve(service);
  }

  /** Registers (or registers again) an endpoint; false when refused for the endpoint limit. */
  boolean register(ExternalEndpoint endpoint, String source) {
    EndpointTable.Registration r;
    synchronized (this) {
      if (closed) {
        return false;
      }
      Optional<EndpointTable.Registration> accepted = table.register(endpoint);
      if (accepted.isEmpty()) {
        return false;
      }
      r = accepted.get();
      if (!r.again()) {
        file.save(table.all());
      }
    }
    if (r.oldChannel() != null) {
      r.oldChannel().shutdownNow();
    }
    LOG.info(
        "discovery handler {} {} at {} ({}, {}; {})",
        endpoint.name(),
        r.again() ? "registered again" : "registered",
        endpoint.endpoint(),
        endpoint.type(),
        endpoint.shared() ? "shared" : "not shared",
        source);
    for (EndpointListener l : r.subscribers()) {
      if (r.replaced() != null) {
        l.dropped(r.replaced());
      }
      l.registered(endpoint, r.again());
    }
    if (r.newName()) {
      fireChanged();
    }
    return true;
  }

  /** Drops an endpoint (its stream kept failing); its devices turn unhealthy. */
  void drop(ExternalEndpoint endpoint, String reason) {
    EndpointTable.Removal r;
    synchronized (this) {
      Optional<EndpointTable.Removal> removed = table.drop(endpoint);
      if (removed.isEmpty()) {
        return;
      }
      r = removed.get();
      file.save(table.all());
    }
    LOG.warn(
        "discovery handler {} at {} dropped: {}; its devices are unhealthy until it registers"
            + " again",
        endpoint.name(),
        endpoint.endpoint(),
        reason);
    if (r.channel() != null) {
      r.channel().shutdownNow();
    }
    for (EndpointListener l : r.subscribers()) {
      l.dropped(endpoint);
    }
    if (r.nameGone()) {
      fireChanged();
    }
  }

  /** Endpoints of {@code name} now, subscribing {@code listener} to later changes atomically. */
  synchronized List<ExternalEndpoint> subscribe(String name, EndpointListener listener) {
    return table.subscribe(name, listener);
  }

  synchronized void unsubscribe(String name, EndpointListener listener) {
    table.unsubscribe(name, listener);
  }

  /** The channel to a registered endpoint, created on first use; empty once it was dropped. */
  synchronized Optional<ManagedChannel> channel(ExternalEndpoint endpoint) {
    if (closed) {
      return Optional.empty();
    }
    return table.channel(
        endpoint, () -> EndpointChannels.open(endpoint, group, executor, settings));
  }

  /** Every endpoint registered now (for status and tests). */
  public synchronized List<ExternalEndpoint> endpoints() {
    return table.all();
  }

  private void fireChanged() {
    // Never on a caller's thread: listeners stop discoveries and wait for them to close.
    scheduler.execute(() -> listeners.forEach(Runnable::run));
  }

  @Override
  public synchronized Optional<DiscoveryHandler> find(String name) {
    return table.handler(name).map(DiscoveryHandler.class::cast);
  }

  @Override
  public synchronized Set<String> names() {
    return table.names();
  }

  @Override
  public void addListener(Runnable onChange) {
    listeners.add(onChange);
  }

  /**
   * Stops taking registrations and removes the socket (first thing on shutdown, so a handler whose
   * stream the stopping agent ends registers with the next agent, not with this one).
   */
  public void stopServing() {
    registration.stop();
  }

  @Override
  public void close() {
    stopServing();
    List<ManagedChannel> channels;
    synchronized (this) {
      closed = true;
      channels = table.channels();
    }
    channels.forEach(ManagedChannel::shutdownNow);
  }
}
