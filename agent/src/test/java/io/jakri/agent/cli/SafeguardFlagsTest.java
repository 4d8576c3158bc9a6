package io.jakri.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.Safeguards;
import io.jakri.agent.discovery.SlotLimits;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The safeguard flags and their documented defaults. */
class SafeguardFlagsTest {

  private static Safeguards parse(String... args) {
    Main main = new Main();
    new CommandLine(main).parseArgs(args);
    return main.safeguards();
  }

  @Test
  void handlersAreSwitchedOffByNameSeparatedByCommas() {
    assertThat(parse("--disable-handlers", "udev, onvif,").handlerLimits().switchedOff())
        .containsExactlyInAnyOrder("udev", "onvif");
    assertThat(parse().handlerLimits().switchedOff()).isEmpty();
  }

  @Test
  void defaultsAreTheDocumentedOnes() {
    assertThat(parse()).isEqualTo(Safeguards.defaults());
    assertThat(Safeguards.defaults().classDomains()).containsExactly("example.com");
    assertThat(Safeguards.defaults().metricsBindAddress()).isEqualTo("0.0.0.0");
    assertThat(Safeguards.defaults().allowReservedBrokerEnv()).isFalse();
    assertThat(Safeguards.defaults().containerPaths().allowedHostPrefixes()).isEmpty();
    assertThat(Safeguards.defaults().slotLimits()).isEqualTo(new SlotLimits(100_000, 150_000));
    assertThat(Safeguards.defaults().handlerLimits())
        .isEqualTo(new io.jakri.agent.discovery.HandlerLimits(java.time.Duration.ofSeconds(10), 4));
  }

  @Test
  void flagsReplaceTheDefaults() {
    Safeguards s =
        parse(
            "--class-domains=Nvidia.com,example.org",
            "--allow-reserved-broker-env",
            "--metrics-bind-address=127.0.0.1",
            "--max-slots-per-configuration=10",
            "--max-slots-per-agent=20",
            "--handler-call-timeout=30s",
            "--handler-stranded-threads=2",
            "--allow-host-mount-prefix",
            "/var/lib/kubelet/plugins/gpu",
            "--allow-host-mount-prefix=/etc/a,/srv/b");
    assertThat(s.classDomains()).containsExactlyInAnyOrder("nvidia.com", "example.org");
    assertThat(s.allowReservedBrokerEnv()).isTrue();
    assertThat(s.metricsBindAddress()).isEqualTo("127.0.0.1");
    assertThat(s.slotLimits()).isEqualTo(new SlotLimits(10, 20));
    assertThat(s.handlerLimits())
        .isEqualTo(new io.jakri.agent.discovery.HandlerLimits(java.time.Duration.ofSeconds(30), 2));
    assertThat(s.containerPaths().allowedHostPrefixes())
        .containsExactly("/var/lib/kubelet/plugins/gpu", "/etc/a", "/srv/b");
    assertThat(parse("--class-domains=").classDomains()).isEmpty();
  }
}
