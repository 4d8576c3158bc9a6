package io.jakri.handler.opcua;

import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * The handler's bound on FindServers requests in flight over all its Configurations together. Each
 * request holds an OPC UA client (Milo's, about 0.3 MB of heap while it lives, most of it the
 * built-in type codecs every client registers) and a TCP connection, so without a bound shared by
 * the Configurations, N Configurations of silent URLs hold 16 × N clients at once.
 *
 * <p>Slots are taken in turns: a Configuration that finds none free waits in line (once, however
 * many of its URLs wait), and a slot given back goes to the first in line, which either starts a
 * request with it and, if more of its URLs wait, queues again at the end, or gives it back. So one
 * Configuration of many silent URLs delays another by at most one request per turn. While anyone
 * waits, every slot is in use. Thread-safe; never calls a waiter while holding its own lock.
 */
final class RequestSlots {

  /** A Configuration waiting for a slot. */
  interface Waiter {
    /**
     * A slot was handed over: start a request with it or {@link #release()} it. Called on the
     * thread that gave a slot back; must not block.
     */
    void granted();
  }

  private final int capacity;
  // Guarded by this. In line, first come first served; a waiter is in line at most once.
  private final Set<Waiter> line = new LinkedHashSet<>();
  private int used;

  RequestSlots(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be positive: " + capacity);
    }
    this.capacity = capacity;
  }

  /**
   * Takes a slot if one is free; otherwise puts {@code waiter} in line (if it is not already) and
   * returns false: it is {@linkplain Waiter#granted() granted} a slot when its turn comes.
   */
  synchronized boolean acquireOrWait(Waiter waiter) {
    if (used < capacity) {
      used++;
      line.remove(waiter);
      return true;
    }
    line.add(waiter);
    return false;
  }

  /** Gives a slot back: to the first in line if anyone waits, else to the free ones. */
  void release() {
    Waiter next = null;
    synchronized (this) {
      Iterator<Waiter> first = line.iterator();
      if (first.hasNext()) {
        next = first.next();
        first.remove();
      } else if (used > 0) {
        used--;
      } else {
        throw new IllegalStateException("no slot is taken");
      }
    }
    if (next != null) {
      next.granted();
    }
  }

  /** Takes {@code waiter} out of line (a closing Configuration). */
  synchronized void forget(Waiter waiter) {
    line.remove(waiter);
  }

  /** Slots in use (for tests). */
  synchronized int used() {
    return used;
  }

  int capacity() {
    return capacity;
  }
}
