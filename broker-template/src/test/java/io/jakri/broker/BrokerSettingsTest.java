package io.jakri.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class BrokerSettingsTest {

  @Test
  void portDefaultsTo8080() {
    assertThat(BrokerSettings.fromEnv(Map.of()).port()).isEqualTo(8080);
    assertThat(BrokerSettings.fromEnv(Map.of(BrokerSettings.PORT_VAR, " ")).port()).isEqualTo(8080);
  }

  @Test
  void portIsReadFromItsVariable() {
    assertThat(BrokerSettings.fromEnv(Map.of("JAKRI_BROKER_HTTP_PORT", "9090")).port())
        .isEqualTo(9090);
    assertThat(BrokerSettings.fromEnv(Map.of("JAKRI_BROKER_HTTP_PORT", "0")).port()).isZero();
  }

  @Test
  void aPortThatIsNoPortNumberIsRejectedNamingTheVariable() {
    for (String bad : new String[] {"tcp://10.0.0.1:80", "65536", "-1", "8o8o", "123456"}) {
      assertThatThrownBy(() -> BrokerSettings.fromEnv(Map.of(BrokerSettings.PORT_VAR, bad)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("JAKRI_BROKER_HTTP_PORT must be a port number");
    }
  }
}
