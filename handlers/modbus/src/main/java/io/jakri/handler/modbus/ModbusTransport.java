package io.jakri.handler.modbus;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** The handler's one network boundary: ask an endpoint who it is. */
interface ModbusTransport extends AutoCloseable {

  /**
   * What to ask.
   *
   * @param host the name to report (the entry of {@code addresses}, or the IP of a block)
   * @param unitIds the unit ids to ask, in order
   * @param eachUnit ask every unit (each that answers is a device) or stop at the first that does
   * @param timeout for the connection and for each request
   */
  record Query(String host, List<Integer> unitIds, boolean eachUnit, Duration timeout) {
    public Query {
      unitIds = List.copyOf(unitIds);
    }
  }

  /**
   * Why an endpoint gave no identity.
   *
   * @param reachable whether a connection was made (false: refused or timed out; normal for an
   *     empty address in a scanned block)
   * @param category a stable name for the kind of problem (one warning per distinct category)
   * @param detail the specifics for the log
   */
  record Failure(boolean reachable, String category, String detail) {}

  /** Thrown (inside the future) when no unit of the endpoint identified itself. */
  final class ProbeException extends Exception {
    private static final long serialVersionUID = 1L;
    private final transient Failure failure;

    ProbeException(Failure failure) {
      super(failure.category() + ": " + failure.detail(), null, false, false);
      this.failure = failure;
    }

    Failure failure() {
      return failure;
    }
  }

  /**
   * Connects, asks Read Device Identification of the units, closes. Never blocks; the future fails
   * with {@link ProbeException} when no unit identified itself.
   */
  CompletableFuture<List<Identity>> identify(InetSocketAddress address, Query query);

  /** Closes every connection (their futures fail); idempotent. */
  @Override
  void close();
}
