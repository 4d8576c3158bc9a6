package io.jakri.handler;

/** A running discovery for one Configuration; closing it stops all reporting. */
public interface Discovery extends AutoCloseable {

  /**
   * Stops discovery. Idempotent, must return promptly (hand slow clean-up to the scheduler), and no
   * snapshot may be reported once it has returned.
   */
  @Override
  void close();
}
