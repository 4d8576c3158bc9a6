package io.jakri.handler.mqtt;

import java.io.IOException;

/** One MQTT client connection, the handler's boundary to the MQTT library. */
interface Session extends AutoCloseable {

  /**
   * Starts connecting and subscribing; returns at once. The outcome arrives as {@link
   * Events#connected} or {@link Events#failed}. Call once per session.
   */
  void connect(Events events) throws IOException;

  /** Disconnects and releases every thread and socket; idempotent; may block about a second. */
  @Override
  void close();

  /** Called on the library's threads. */
  interface Events {
    /** Connected to {@code broker} and subscribed. */
    void connected(String broker);

    /** Could not connect or subscribe. */
    void failed(Throwable cause);

    /** A message on a subscribed topic, from {@code broker}. */
    void message(String broker, String topic, byte[] payload);

    /** An established connection broke. */
    void lost(Throwable cause);
  }

  /** Opens sessions for one Configuration. */
  interface Factory {
    Session create();
  }
}
