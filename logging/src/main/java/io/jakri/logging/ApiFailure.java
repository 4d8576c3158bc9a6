package io.jakri.logging;

/**
 * One line for a failed call to the Kubernetes API server (a list, a watch): against which server,
 * and the innermost cause's own words — the client wraps a refused connection several times over,
 * and the wrappers' messages say nothing. Used by the agent and the controller.
 */
public final class ApiFailure {

  private ApiFailure() {}

  /** E.g. {@code cannot reach the API server https://10.0.0.1:443/: Connection refused}. */
  public static String describe(String apiServer, Throwable failure) {
    Throwable root = failure;
    Throwable unreachable = null;
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      root = t;
      if (t instanceof java.net.ConnectException
          || t instanceof java.net.UnknownHostException
          || t instanceof java.net.NoRouteToHostException
          || t instanceof java.net.SocketTimeoutException
          || t instanceof java.net.http.HttpConnectTimeoutException) {
        unreachable = t;
      }
    }
    if (unreachable != null) {
      return "cannot reach the API server " + apiServer + ": " + words(unreachable);
    }
    return words(root);
  }

  /**
   * The exception's own message on one line; its class name when it has none. The JDK's HttpClient
   * reports a refused connection as a {@code ConnectException} without a message (over a {@code
   * ClosedChannelException}): that is said as {@code Connection refused}, as other clients say it.
   */
  private static String words(Throwable t) {
    String words = t.getMessage();
    if (words == null && t instanceof java.net.ConnectException) {
      words = "Connection refused";
    }
    if (words == null) {
      words = t.getClass().getSimpleName();
    }
    return words.replaceAll("\\s+", " ");
  }
}
