package io.jakri.handler.opcua;

import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.HashedWheelTimer;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The two threads Milo cannot do without, shared by every opcua discovery of one handler: a netty
 * event loop for the TCP connections (one thread) and a wheel timer for request timeouts. They are
 * created when the first discovery starts and stopped when the last one closes, so an agent with no
 * opcua Configuration runs no OPC UA thread; Milo's own static shared pools are never used.
 * Thread-safe.
 */
final class MiloTransport {

  /**
   * What one discovery holds while it runs; closing it gives the transport back, after which its
   * getters throw {@link IllegalStateException}.
   */
  interface Lease extends AutoCloseable {
    NioEventLoopGroup eventLoop();

    HashedWheelTimer timer();

    @Override
    void close();
  }

  private int users;
  private NioEventLoopGroup eventLoop;
  private HashedWheelTimer timer;

  /** Takes the transport, creating its threads if nobody holds it. */
  synchronized Lease acquire() {
    if (users == 0) {
      eventLoop = new NioEventLoopGroup(1, daemon("jakri-opcua-io"));
      timer = new HashedWheelTimer(daemon("jakri-opcua-timer"), 50, TimeUnit.MILLISECONDS);
    }
    users++;
    return new Held(eventLoop, timer);
  }

  /**
   * A lease. Its fields are its only references to the loop and the timer (no captured locals), and
   * they are cleared on close, so a closed lease, which its discovery may outlive, references
   * neither the stopped loop nor the stopped timer, whose unprocessed timeouts would otherwise keep
   * the clients that were in flight reachable.
   */
  private final class Held implements Lease {
    // Guarded by MiloTransport.this; null once closed.
    private NioEventLoopGroup loop;
    private HashedWheelTimer wheel;

    Held(NioEventLoopGroup loop, HashedWheelTimer wheel) {
      this.loop = loop;
      this.wheel = wheel;
    }

    @Override
    public NioEventLoopGroup eventLoop() {
      synchronized (MiloTransport.this) {
        return open(loop);
      }
    }

    @Override
    public HashedWheelTimer timer() {
      synchronized (MiloTransport.this) {
        return open(wheel);
      }
    }

    @Override
    public void close() {
      synchronized (MiloTransport.this) {
        if (loop == null) {
          return;
        }
        loop = null;
        wheel = null;
        release();
      }
    }
  }

  private static <T> T open(T leased) {
    if (leased == null) {
      // Never null: Milo would fall back to its static shared pools.
      throw new IllegalStateException("the OPC UA transport lease was closed");
    }
    return leased;
  }

  /** Whether threads are running (for tests). */
  synchronized boolean active() {
    return users > 0;
  }

  private void release() {
    users--;
    if (users == 0) {
      // Neither call blocks: the event loop stops on its own thread, the timer's worker exits.
      eventLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      timer.stop();
      eventLoop = null;
      timer = null;
    }
  }

  private static ThreadFactory daemon(String name) {
    AtomicInteger count = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, name + "-" + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }
}
