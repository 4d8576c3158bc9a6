package io.jakri.handler;

/** The discovery details cannot be acted on; the message names the field and the problem. */
public class InvalidDetailsException extends Exception {
  private static final long serialVersionUID = 1L;

  public InvalidDetailsException(String message) {
    super(message);
  }

  public InvalidDetailsException(String message, Throwable cause) {
    super(message, cause);
  }
}
