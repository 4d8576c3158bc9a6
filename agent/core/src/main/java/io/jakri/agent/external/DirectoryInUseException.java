package io.jakri.agent.external;

import java.io.IOException;

/**
 * The discovery-handlers directory is served by another agent: its registration socket answers.
 * {@link #getMessage()} is one line for the user naming the socket; nothing in the directory was
 * changed.
 */
public final class DirectoryInUseException extends IOException {
  private static final long serialVersionUID = 1L;

  DirectoryInUseException(String message) {
    super(message);
  }
}
