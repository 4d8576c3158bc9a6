package io.jakri.agent.external;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.DiscoveryContext;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.Test;
import v0.Discovery.DiscoverRequest;

class ExternalDiscoveryTest {

  @Test
  void propertiesTravelAsUtf8Bytes() {
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    try {
      DiscoverRequest request =
          ExternalHandler.request(
              new DiscoveryContext(
                  "cfg", "node", "descriptions: [a]", Map.of("token", "s3cr\u00e9t"), scheduler),
              null);
      assertThat(request.getDiscoveryDetails()).isEqualTo("descriptions: [a]");
      assertThat(request.getDiscoveryPropertiesOrThrow("token").getVec().toByteArray())
          .isEqualTo("s3cr\u00e9t".getBytes(StandardCharsets.UTF_8));
      assertThat(request.getDiscoveryPropertiesOrThrow("token").hasVec()).isTrue();
    } finally {
      scheduler.shutdownNow();
    }
  }
}
