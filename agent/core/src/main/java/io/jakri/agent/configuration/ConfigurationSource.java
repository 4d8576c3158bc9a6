package io.jakri.agent.configuration;

import java.io.IOException;

/**
 * Where the agent's Configurations come from: files ({@link ConfigurationFiles}, standalone) or the
 * API server's watch (cluster mode). Either hands the complete list of valid Configurations to the
 * consumer it was built with, after every change.
 */
public interface ConfigurationSource extends AutoCloseable {

  /** Reads or lists once, hands the result on, then follows changes. */
  void start() throws IOException;

  /** Stops following changes. Idempotent. */
  @Override
  void close();
}
