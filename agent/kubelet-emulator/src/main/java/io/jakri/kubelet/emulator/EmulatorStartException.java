package io.jakri.kubelet.emulator;

import java.io.IOException;

/**
 * The emulator refused to start or could not: its directory belongs to a running kubelet (a {@code
 * kubelet.sock} that accepts connections, a real kubelet's checkpoint) or cannot be created or
 * served. {@link #getMessage()} is one line for the user naming the path and the reason; nothing in
 * the directory was changed.
 */
public final class EmulatorStartException extends IOException {
  private static final long serialVersionUID = 1L;

  EmulatorStartException(String message) {
    super(message);
  }
}
