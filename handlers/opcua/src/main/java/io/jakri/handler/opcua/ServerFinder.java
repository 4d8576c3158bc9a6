package io.jakri.handler.opcua;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Asks one discovery URL for the applications it knows (OPC UA FindServers). The only seam between
 * discovery and the OPC UA client library.
 */
@FunctionalInterface
public interface ServerFinder {

  /**
   * Starts FindServers on {@code url}; never blocks. The future fails when the URL cannot be
   * reached, the request times out or the answer is not a FindServers answer.
   */
  CompletableFuture<List<Application>> findServers(OpcTcpUrl url);
}
