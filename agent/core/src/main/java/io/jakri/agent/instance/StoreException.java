package io.jakri.agent.instance;

/** A store operation failed; the subclass says why. */
public abstract sealed class StoreException extends Exception {
  private static final long serialVersionUID = 1L;

  protected StoreException(String message, Throwable cause) {
    super(message, cause);
  }

  /** The object changed since it was read (HTTP 409 in cluster mode); re-read and retry. */
  public static final class Conflict extends StoreException {
    private static final long serialVersionUID = 1L;

    public Conflict(String message) {
      super(message, null);
    }
  }

  /** The object does not exist. */
  public static final class NotFound extends StoreException {
    private static final long serialVersionUID = 1L;

    public NotFound(String message) {
      super(message, null);
    }
  }

  /** The store cannot be reached or refused the request for another reason. */
  public static final class Unavailable extends StoreException {
    private static final long serialVersionUID = 1L;

    public Unavailable(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
