package io.jakri.handler.opcua;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * OPC UA endpoints on loopback that never answer, for tests and the bench: <em>silent</em> ones
 * accept TCP and never send a byte (the client's Hello goes unacknowledged), <em>unreachable</em>
 * ones never accept (their accept queue is kept full, so the kernel drops new connection attempts
 * and the client's connect times out). One thread serves them all and counts the connections the
 * clients open and close; a connection is counted open from accept until the client closes it.
 * Thread-safe.
 */
public final class SilentServers implements AutoCloseable {

  private final Selector selector;
  private final List<String> silent;
  private final List<String> unreachable;
  private final List<AutoCloseable> held;
  private final Thread thread;
  private final AtomicInteger accepted = new AtomicInteger();
  private final AtomicInteger closed = new AtomicInteger();
  private final AtomicInteger maxOpen = new AtomicInteger();
  private final AtomicInteger[] perServer;
  private volatile boolean stopping;

  private SilentServers(
      Selector selector, List<String> silent, List<String> unreachable, List<AutoCloseable> held) {
    this.selector = selector;
    this.silent = List.copyOf(silent);
    this.unreachable = List.copyOf(unreachable);
    this.held = held;
    this.perServer = new AtomicInteger[silent.size()];
    for (int i = 0; i < perServer.length; i++) {
      perServer[i] = new AtomicInteger();
    }
    this.thread = new Thread(this::serve, "silent-opcua-servers");
    thread.setDaemon(true);
  }

  /** Starts {@code silent} endpoints that accept and never answer and {@code unreachable} ones. */
  public static SilentServers start(int silent, int unreachable) throws IOException {
    Selector selector = Selector.open();
    List<AutoCloseable> held = new ArrayList<>();
    List<String> silentUrls = new ArrayList<>();
    List<String> unreachableUrls = new ArrayList<>();
    try {
      for (int i = 0; i < silent; i++) {
        ServerSocketChannel server = ServerSocketChannel.open();
        held.add(server);
        server.bind(new InetSocketAddress("127.0.0.1", 0), 512);
        server.configureBlocking(false);
        server.register(selector, SelectionKey.OP_ACCEPT, i);
        silentUrls.add(url(server));
      }
      for (int i = 0; i < unreachable; i++) {
        ServerSocketChannel server = ServerSocketChannel.open();
        held.add(server);
        server.bind(new InetSocketAddress("127.0.0.1", 0), 1);
        // Linux queues backlog + 1 connections; these fill the queue, which is never accepted.
        for (int k = 0; k < 3; k++) {
          SocketChannel filler = SocketChannel.open();
          held.add(filler);
          filler.configureBlocking(false);
          filler.connect(server.getLocalAddress());
        }
        unreachableUrls.add(url(server));
      }
    } catch (IOException | RuntimeException e) {
      closeAll(held);
      selector.close();
      throw e;
    }
    SilentServers servers = new SilentServers(selector, silentUrls, unreachableUrls, held);
    servers.thread.start();
    return servers;
  }

  private static String url(ServerSocketChannel server) throws IOException {
    return "opc.tcp://127.0.0.1:" + ((InetSocketAddress) server.getLocalAddress()).getPort() + "/";
  }

  /** The URLs of the endpoints that accept and never answer. */
  public List<String> silentUrls() {
    return silent;
  }

  /** The URLs of the endpoints that never accept. */
  public List<String> unreachableUrls() {
    return unreachable;
  }

  /** Connections the clients opened to the silent endpoints so far. */
  public int accepted() {
    return accepted.get();
  }

  /** Connections opened and not yet closed by the client. */
  public int open() {
    return accepted.get() - closed.get();
  }

  /** The most connections that were open at once. */
  public int maxOpen() {
    return maxOpen.get();
  }

  /** The fewest connections any one silent endpoint has accepted (how many rounds all had). */
  public int fewestAcceptedByOne() {
    int fewest = Integer.MAX_VALUE;
    for (AtomicInteger count : perServer) {
      fewest = Math.min(fewest, count.get());
    }
    return fewest;
  }

  private void serve() {
    ByteBuffer sink = ByteBuffer.allocate(4096);
    List<SelectionKey> accepts = new ArrayList<>();
    try {
      while (!stopping) {
        selector.select();
        // Closes first, then accepts: a client that closed one connection and opened the next
        // within one selection is not counted with both open.
        accepts.clear();
        for (SelectionKey key : selector.selectedKeys()) {
          if (!key.isValid()) {
            continue;
          }
          if (key.isAcceptable()) {
            accepts.add(key);
          } else if (key.isReadable()) {
            drain(key, sink);
          }
        }
        selector.selectedKeys().clear();
        for (SelectionKey key : accepts) {
          accept(key);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("silent servers failed", e);
    } finally {
      List<AutoCloseable> channels = new ArrayList<>();
      for (SelectionKey key : selector.keys()) {
        channels.add(key.channel());
      }
      channels.add(selector);
      closeAll(channels);
    }
  }

  private void accept(SelectionKey key) throws IOException {
    SocketChannel connection;
    while ((connection = ((ServerSocketChannel) key.channel()).accept()) != null) {
      connection.configureBlocking(false);
      connection.register(selector, SelectionKey.OP_READ);
      perServer[(Integer) key.attachment()].incrementAndGet();
      int open = accepted.incrementAndGet() - closed.get();
      maxOpen.accumulateAndGet(open, Math::max);
    }
  }

  private void drain(SelectionKey key, ByteBuffer sink) {
    SocketChannel connection = (SocketChannel) key.channel();
    int read;
    try {
      sink.clear();
      read = connection.read(sink);
    } catch (IOException e) {
      read = -1; // reset by the client: closed as well
    }
    if (read < 0) {
      key.cancel();
      closeAll(List.of(connection));
      closed.incrementAndGet();
    }
  }

  private static void closeAll(List<? extends AutoCloseable> closeables) {
    for (AutoCloseable c : closeables) {
      try {
        c.close();
      } catch (Exception e) {
        // best effort
      }
    }
  }

  @Override
  public void close() throws InterruptedException {
    stopping = true;
    selector.wakeup();
    thread.join(5_000);
    closeAll(held);
  }
}
