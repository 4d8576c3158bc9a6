package io.jakri.handler.modbus;

import io.jakri.handler.modbus.DeviceIdCodec.ExceptionReply;
import io.jakri.handler.modbus.DeviceIdCodec.Frame;
import io.jakri.handler.modbus.DeviceIdCodec.MalformedFrameException;
import io.jakri.handler.modbus.DeviceIdCodec.Page;
import io.jakri.handler.modbus.DeviceIdCodec.ReadCode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@link ModbusTransport} over non-blocking {@link SocketChannel}s and one {@link Selector}, polled
 * with {@code selectNow} on the handler's scheduler every {@value #PUMP_MILLIS} ms while a
 * connection is open (never blocking it, no thread of its own, nothing scheduled when idle).
 *
 * <p>Bounds per connection: one 260-byte receive buffer (the largest Modbus TCP frame; a header
 * announcing more is refused before its body is awaited), at most {@value #MAX_BYTES} bytes read in
 * all, {@value #MAX_PAGES} pages per unit, {@value #MAX_STALE} frames for other transactions; the
 * timeout covers the connection and each request. State is guarded by one lock; futures are
 * completed outside it.
 */
final class NioTransport implements ModbusTransport {

  static final long PUMP_MILLIS = 1;
  static final int MAX_BYTES = 16 * 1024;
  static final int MAX_PAGES = 8;
  static final int MAX_STALE = 4;

  private final ScheduledExecutorService scheduler;
  private final Object lock = new Object();
  // guarded by lock
  private Selector selector;
  private final Set<Exchange> open = new HashSet<>();
  private ScheduledFuture<?> pump;
  private boolean closed;
  private int transactions;

  NioTransport(ScheduledExecutorService scheduler) {
    this.scheduler = scheduler;
  }

  @Override
  public CompletableFuture<List<Identity>> identify(InetSocketAddress address, Query query) {
    CompletableFuture<List<Identity>> result = new CompletableFuture<>();
    List<Runnable> after = new ArrayList<>();
    synchronized (lock) {
      if (closed) {
        result.completeExceptionally(
            new ProbeException(new Failure(false, "closed", "the discovery is closed")));
        return result;
      }
      Exchange exchange = new Exchange(address, query, result);
      try {
        if (selector == null) {
          selector = Selector.open();
        }
        exchange.channel = SocketChannel.open();
        exchange.channel.configureBlocking(false);
        open.add(exchange);
        boolean connected = exchange.channel.connect(address);
        exchange.key = exchange.channel.register(selector, SelectionKey.OP_CONNECT, exchange);
        exchange.arm();
        if (connected) {
          exchange.connected(after);
        }
        ensurePump();
      } catch (IOException | RuntimeException e) {
        exchange.fail(new Failure(false, "connect failed", String.valueOf(e.getMessage())), after);
      }
    }
    after.forEach(Runnable::run);
    return result;
  }

  private void ensurePump() {
    if (pump == null && !closed) {
      try {
        pump = scheduler.schedule(this::pump, PUMP_MILLIS, TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException e) {
        closeLocked(new ArrayList<>());
      }
    }
  }

  private void pump() {
    List<Runnable> after = new ArrayList<>();
    synchronized (lock) {
      pump = null;
      if (closed || selector == null) {
        return;
      }
      try {
        selector.selectNow();
      } catch (IOException e) {
        closeLocked(after);
      }
      if (!closed) {
        for (SelectionKey key : selector.selectedKeys()) {
          Exchange exchange = (Exchange) key.attachment();
          try {
            if (key.isValid() && key.isConnectable()) {
              exchange.channel.finishConnect();
              exchange.connected(after);
            }
            if (key.isValid() && key.isWritable()) {
              exchange.writable(after);
            }
            if (key.isValid() && key.isReadable()) {
              exchange.readable(after);
            }
          } catch (CancelledKeyException e) {
            // finished meanwhile
          } catch (IOException e) {
            exchange.fail(
                new Failure(
                    exchange.everConnected,
                    exchange.everConnected ? "connection broken" : "unreachable",
                    String.valueOf(e.getMessage())),
                after);
          }
        }
        selector.selectedKeys().clear();
        if (!open.isEmpty()) {
          ensurePump();
        }
      }
    }
    after.forEach(Runnable::run);
  }

  @Override
  public void close() {
    List<Runnable> after = new ArrayList<>();
    synchronized (lock) {
      closeLocked(after);
    }
    after.forEach(Runnable::run);
  }

  private void closeLocked(List<Runnable> after) {
    if (closed) {
      return;
    }
    closed = true;
    for (Exchange exchange : List.copyOf(open)) {
      exchange.fail(new Failure(false, "closed", "the discovery is closed"), after);
    }
    if (pump != null) {
      pump.cancel(false);
      pump = null;
    }
    if (selector != null) {
      try {
        selector.close();
      } catch (IOException e) {
        // nothing left to do
      }
    }
  }

  /** One connection's state; touched under the transport's lock only. */
  private final class Exchange {
    final InetSocketAddress address;
    final Query query;
    final CompletableFuture<List<Identity>> result;
    final ByteBuffer in = ByteBuffer.allocate(DeviceIdCodec.MAX_ADU_BYTES);
    final List<Identity> identities = new ArrayList<>();
    final Map<Integer, String> objects = new LinkedHashMap<>();
    SocketChannel channel;
    SelectionKey key;
    ByteBuffer out;
    ScheduledFuture<?> deadline;
    boolean everConnected;
    boolean done;
    int unitIndex;
    ReadCode readCode = ReadCode.REGULAR;
    int objectId;
    int pages;
    int transaction;
    int conformity;
    int stale;
    long bytesRead;
    int armed;
    Failure lastFailure;

    Exchange(InetSocketAddress address, Query query, CompletableFuture<List<Identity>> result) {
      this.address = address;
      this.query = query;
      this.result = result;
    }

    int unit() {
      return query.unitIds().get(unitIndex);
    }

    void arm() {
      if (deadline != null) {
        deadline.cancel(false);
      }
      int stamp = ++armed;
      try {
        deadline =
            scheduler.schedule(
                () -> timedOut(stamp), query.timeout().toMillis(), TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException e) {
        // the scheduler is going away; close() follows
      }
    }

    void timedOut(int stamp) {
      List<Runnable> after = new ArrayList<>();
      synchronized (lock) {
        if (done || stamp != armed) {
          return;
        }
        long ms = query.timeout().toMillis();
        if (!everConnected) {
          fail(new Failure(false, "unreachable", "no connection within " + ms + " ms"), after);
        } else {
          unitFailed(
              new Failure(
                  true, "no reply", "unit " + unit() + " sent no reply within " + ms + " ms"),
              after);
        }
      }
      after.forEach(Runnable::run);
    }

    void connected(List<Runnable> after) {
      everConnected = true;
      send(after);
    }

    /**
     * Sends the next request: written at once (11 bytes nearly always fit the socket's buffer,
     * which saves a poll), the rest when the channel says it is writable.
     */
    void send(List<Runnable> after) {
      transaction = (++transactions) & 0xFFFF;
      out = ByteBuffer.wrap(DeviceIdCodec.request(transaction, unit(), readCode, objectId));
      arm();
      try {
        channel.write(out);
      } catch (IOException e) {
        fail(new Failure(true, "connection broken", String.valueOf(e.getMessage())), after);
        return;
      }
      key.interestOps(out.hasRemaining() ? SelectionKey.OP_WRITE : SelectionKey.OP_READ);
    }

    void writable(List<Runnable> after) throws IOException {
      channel.write(out);
      if (!out.hasRemaining()) {
        key.interestOps(SelectionKey.OP_READ);
      }
    }

    void readable(List<Runnable> after) throws IOException {
      int n = channel.read(in);
      if (n < 0) {
        fail(
            new Failure(true, "closed by peer", "the connection closed before a complete reply"),
            after);
        return;
      }
      bytesRead += n;
      if (bytesRead > MAX_BYTES) {
        fail(
            new Failure(
                true, "flood", "sent more than " + MAX_BYTES + " bytes; connection dropped"),
            after);
        return;
      }
      in.flip();
      try {
        while (!done) {
          var frame = DeviceIdCodec.nextFrame(in);
          if (frame.isEmpty()) {
            break;
          }
          frame(frame.get(), after);
        }
      } catch (MalformedFrameException e) {
        fail(new Failure(true, "malformed reply", e.getMessage()), after);
        return;
      }
      in.compact();
    }

    void frame(Frame frame, List<Runnable> after) throws MalformedFrameException {
      if (frame.transactionId() != transaction) {
        if (++stale > MAX_STALE) {
          throw new MalformedFrameException(
              "more than " + MAX_STALE + " frames for transactions not asked");
        }
        return;
      }
      if (frame.unitId() != unit()) {
        throw new MalformedFrameException(
            "reply from unit " + frame.unitId() + " to a request for unit " + unit());
      }
      var reply = DeviceIdCodec.reply(frame.pdu(), readCode);
      if (reply instanceof ExceptionReply exception) {
        if (readCode == ReadCode.REGULAR
            && objectId == 0
            && (exception.code() == 2 || exception.code() == 3)) {
          readCode = ReadCode.BASIC;
          send(after);
          return;
        }
        unitFailed(
            new Failure(
                true,
                "exception " + exception.code(),
                "unit " + unit() + " answered exception " + exception.code()),
            after);
        return;
      }
      Page page = (Page) reply;
      pages++;
      conformity = page.conformity();
      for (var object : page.objects().entrySet()) {
        objects.putIfAbsent(object.getKey(), object.getValue());
      }
      if (page.moreFollows()) {
        if (pages >= MAX_PAGES) {
          throw new MalformedFrameException("more than " + MAX_PAGES + " pages of objects");
        }
        if (page.nextObjectId() <= objectId) {
          throw new MalformedFrameException(
              "more follows but the next object id 0x"
                  + DeviceIdCodec.hex(page.nextObjectId())
                  + " does not advance past 0x"
                  + DeviceIdCodec.hex(objectId));
        }
        objectId = page.nextObjectId();
        send(after);
        return;
      }
      for (int required : List.of(Identity.VENDOR_NAME, Identity.PRODUCT_CODE, Identity.REVISION)) {
        if (!objects.containsKey(required)) {
          unitFailed(
              new Failure(
                  true,
                  "incomplete identity",
                  "unit " + unit() + " left out mandatory object 0x" + DeviceIdCodec.hex(required)),
              after);
          return;
        }
      }
      identities.add(new Identity(query.host(), address.getPort(), unit(), conformity, objects));
      if (query.eachUnit()) {
        nextUnit(after);
      } else {
        finish(after);
      }
    }

    void unitFailed(Failure failure, List<Runnable> after) {
      lastFailure = failure;
      nextUnit(after);
    }

    void nextUnit(List<Runnable> after) {
      unitIndex++;
      if (unitIndex >= query.unitIds().size()) {
        finish(after);
        return;
      }
      readCode = ReadCode.REGULAR;
      objectId = 0;
      pages = 0;
      objects.clear();
      send(after);
    }

    void finish(List<Runnable> after) {
      if (identities.isEmpty()) {
        fail(
            lastFailure == null
                ? new Failure(true, "no identity", "no unit answered")
                : lastFailure,
            after);
        return;
      }
      end();
      List<Identity> found = List.copyOf(identities);
      after.add(() -> result.complete(found));
    }

    void fail(Failure failure, List<Runnable> after) {
      if (done) {
        return;
      }
      end();
      after.add(() -> result.completeExceptionally(new ProbeException(failure)));
    }

    private void end() {
      done = true;
      open.remove(this);
      if (deadline != null) {
        deadline.cancel(false);
      }
      if (key != null) {
        key.cancel();
      }
      if (channel != null) {
        try {
          channel.close();
        } catch (IOException e) {
          // closed anyway
        }
      }
    }
  }
}
