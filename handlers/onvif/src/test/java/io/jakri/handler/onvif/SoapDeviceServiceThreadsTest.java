package io.jakri.handler.onvif;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.DiscoveryContext;
import java.net.URL;
import java.net.URLClassLoader;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.Test;

/**
 * The agent counts a thread as a plugin's when its context class loader is the plugin's, and waits
 * for those threads before it closes the loader. The HTTP client's selector thread is the JDK's and
 * outlives the discovery (JDK 17's client cannot be closed), so it must not carry the plugin's.
 */
class SoapDeviceServiceThreadsTest {

  @Test
  void theHttpClientsSelectorThreadDoesNotCarryThePluginsClassLoader() throws Exception {
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    Thread current = Thread.currentThread();
    ClassLoader was = current.getContextClassLoader();
    try (URLClassLoader plugin = new URLClassLoader(new URL[0], was)) {
      List<Thread> before = List.copyOf(Thread.getAllStackTraces().keySet());
      current.setContextClassLoader(plugin);
      SoapDeviceService service;
      try {
        service = new SoapDeviceService(scheduler, Clock.systemUTC());
      } finally {
        current.setContextClassLoader(was);
      }
      List<Thread> started =
          Thread.getAllStackTraces().keySet().stream().filter(t -> !before.contains(t)).toList();
      assertThat(started)
          .as("the client started its selector thread")
          .anyMatch(t -> t.getName().contains("SelectorManager"));
      assertThat(started)
          .as("threads started by the client, with their context class loaders")
          .noneMatch(t -> t.getContextClassLoader() == plugin);
      assertThat(service).isNotNull();
    } finally {
      scheduler.shutdownNow();
    }
  }

  @Test
  void theHandlersConfigurationsShareOneClientPerScheduler() {
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    ScheduledExecutorService another = Executors.newSingleThreadScheduledExecutor();
    try {
      OnvifHandler.SharedDeviceService services = new OnvifHandler.SharedDeviceService();
      List<Thread> before = List.copyOf(Thread.getAllStackTraces().keySet());
      DeviceService first = services.apply(context("a", scheduler));
      DeviceService second = services.apply(context("b", scheduler));
      assertThat(second).isSameAs(first);
      assertThat(
              Thread.getAllStackTraces().keySet().stream()
                  .filter(t -> !before.contains(t) && t.getName().contains("SelectorManager")))
          .as("selector threads started")
          .hasSize(1);

      assertThat(services.apply(context("c", another))).isNotSameAs(first);
    } finally {
      scheduler.shutdownNow();
      another.shutdownNow();
    }
  }

  private static DiscoveryContext context(String name, ScheduledExecutorService scheduler) {
    return new DiscoveryContext(name, "node", "", Map.of(), scheduler);
  }
}
