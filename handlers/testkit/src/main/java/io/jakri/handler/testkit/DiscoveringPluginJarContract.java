package io.jakri.handler.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PluginJarContract} for handlers that can discover without a network or hardware (from
 * their details alone): the packaged handler, started with sample details, reports the expected
 * devices and no failure.
 */
public abstract class DiscoveringPluginJarContract extends PluginJarContract {

  /** Sample details for one discovery run and the device ids the handler must report first. */
  public record Sample(String configuration, String node, String details, List<String> ids) {
    public Sample {
      ids = List.copyOf(ids);
    }
  }

  /** The discovery run to check. */
  protected abstract Sample sample();

  @Test
  void sampleDetailsDiscoverTheExpectedDevices(@TempDir Path plugins) throws Exception {
    Sample s = sample();
    RecordingListener listener = new RecordingListener();
    DiscoveryContext context =
        new DiscoveryContext(s.configuration(), s.node(), s.details(), Map.of(), scheduler);
    try (Discovery discovery = load(plugins).handler().start(context, listener)) {
      await().atMost(Duration.ofSeconds(10)).until(() -> !listener.snapshots().isEmpty());
    }
    assertThat(listener.failures()).isEmpty();
    assertThat(listener.snapshots().get(0))
        .extracting(DiscoveredDevice::id)
        .containsExactlyElementsOf(s.ids());
  }
}
