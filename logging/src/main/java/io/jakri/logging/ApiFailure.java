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
