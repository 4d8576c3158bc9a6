package io.jakri.agent.cluster;

/**
 * One line for a failed list or watch: what failed, against which API server, and the innermost
 * cause's own words (fabric8 wraps a refused connection three times over).
 */
final class WatchFailure {

  private WatchFailure() {}

  /** E.g. {@code cannot reach the API server https://10.0.0.1:443/: Connection refused}. */
  static String describe(String apiServer, Throwable failure) {
    Throwable root = failure;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String words = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    if (root instanceof java.net.ConnectException
        || root instanceof java.net.UnknownHostException
        || root instanceof java.net.NoRouteToHostException
        || root instanceof java.net.SocketTimeoutException) {
      return "cannot reach the API server " + apiServer + ": " + words.replaceAll("\\s+", " ");
    }
    return words.replaceAll("\\s+", " ");
  }
}
