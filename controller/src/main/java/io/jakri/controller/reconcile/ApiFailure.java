package io.jakri.controller.reconcile;

/**
 * One line for a failed list or watch: against which API server, and the innermost cause's own
 * words (fabric8 wraps a refused connection several times over).
 */
public final class ApiFailure {

  private ApiFailure() {}

  /** E.g. {@code cannot reach the API server https://10.0.0.1:443/: Connection refused}. */
  public static String describe(String apiServer, Throwable failure) {
    Throwable root = failure;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String words = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    words = words.replaceAll("\\s+", " ");
    if (root instanceof java.net.ConnectException
        || root instanceof java.net.UnknownHostException
        || root instanceof java.net.NoRouteToHostException
        || root instanceof java.net.SocketTimeoutException) {
      return "cannot reach the API server " + apiServer + ": " + words;
    }
    return words;
  }
}
