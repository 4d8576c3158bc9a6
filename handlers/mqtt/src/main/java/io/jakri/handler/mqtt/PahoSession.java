package io.jakri.handler.mqtt;

import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import javax.net.ssl.SSLSocketFactory;
import org.eclipse.paho.client.mqttv3.IMqttActionListener;
import org.eclipse.paho.client.mqttv3.IMqttDeliveryToken;
import org.eclipse.paho.client.mqttv3.IMqttToken;
import org.eclipse.paho.client.mqttv3.MqttAsyncClient;
import org.eclipse.paho.client.mqttv3.MqttCallback;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.ScheduledExecutorPingSender;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;

/**
 * A {@link Session} on Paho's asynchronous client: nothing blocks the caller; keep-alive pings run
 * on the agent's scheduler; Paho's own receive/send/callback threads (three per Configuration,
 * never per device) end in {@link #close()}, which waits for them at most a second.
 */
final class PahoSession implements Session {

  /** The credentials and trust a session uses; {@code password} is never logged. */
  record Access(
      Optional<String> username, Optional<char[]> password, Optional<SSLSocketFactory> tls) {
    @Override
    public String toString() {
      return "Access[username="
          + username.orElse("-")
          + ", password=***, tls="
          + tls.isPresent()
          + "]";
    }
  }

  private final List<URI> brokers;
  private final List<String> filters;
  private final String clientId;
  private final Access access;
  private final ScheduledExecutorService scheduler;
  private final Object lock = new Object();
  private MqttAsyncClient client; // guarded by lock
  private boolean closed; // guarded by lock

  PahoSession(
      List<URI> brokers,
      List<String> filters,
      String clientId,
      Access access,
      ScheduledExecutorService scheduler) {
    this.brokers = List.copyOf(brokers);
    this.filters = List.copyOf(filters);
    this.clientId = Objects.requireNonNull(clientId);
    this.access = Objects.requireNonNull(access);
    this.scheduler = Objects.requireNonNull(scheduler);
  }

  @Override
  public void connect(Events events) throws IOException {
    MqttAsyncClient c;
    try {
      c =
          new MqttAsyncClient(
              brokers.get(0).toString(),
              clientId,
              new MemoryPersistence(),
              new ScheduledExecutorPingSender(scheduler),
              null);
    } catch (MqttException e) {
      throw new IOException(e.getMessage(), e);
    }
    synchronized (lock) {
      if (closed) {
        return;
      }
      client = c;
    }
    c.setCallback(
        new MqttCallback() {
          @Override
          public void connectionLost(Throwable cause) {
            events.lost(cause);
          }

          @Override
          public void messageArrived(String topic, MqttMessage message) {
            events.message(c.getCurrentServerURI(), topic, message.getPayload());
          }

          @Override
          public void deliveryComplete(IMqttDeliveryToken token) {}
        });
    MqttConnectOptions options = new MqttConnectOptions();
    options.setServerURIs(brokers.stream().map(URI::toString).toArray(String[]::new));
    options.setCleanSession(true);
    options.setAutomaticReconnect(false);
    options.setConnectionTimeout(10);
    options.setKeepAliveInterval(30);
    options.setMaxInflight(10);
    access.username().ifPresent(options::setUserName);
    access.password().ifPresent(options::setPassword);
    access.tls().ifPresent(options::setSocketFactory);
    options.setHttpsHostnameVerificationEnabled(true);
    int[] qos = new int[filters.size()];
    java.util.Arrays.fill(qos, 1);
    try {
      c.connect(
          options,
          null,
          new IMqttActionListener() {
            @Override
            public void onSuccess(IMqttToken token) {
              try {
                c.subscribe(
                    filters.toArray(String[]::new),
                    qos,
                    null,
                    new IMqttActionListener() {
                      @Override
                      public void onSuccess(IMqttToken token) {
                        events.connected(c.getCurrentServerURI());
                      }

                      @Override
                      public void onFailure(IMqttToken token, Throwable cause) {
                        events.failed(cause);
                      }
                    });
              } catch (MqttException | RuntimeException e) {
                events.failed(e);
              }
            }

            @Override
            public void onFailure(IMqttToken token, Throwable cause) {
              events.failed(cause);
            }
          });
    } catch (MqttException | RuntimeException e) {
      throw new IOException(e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    MqttAsyncClient c;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      c = client;
      client = null;
    }
    if (c == null) {
      return;
    }
    try {
      c.disconnectForcibly(0, 1000, false);
    } catch (MqttException | RuntimeException e) {
      // Not connected (any more): nothing to send.
    }
    try {
      c.close(true);
    } catch (MqttException | RuntimeException e) {
      // Already closed.
    }
  }
}
