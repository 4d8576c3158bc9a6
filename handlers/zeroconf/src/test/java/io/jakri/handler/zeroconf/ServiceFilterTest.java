package io.jakri.handler.zeroconf;

import static io.jakri.handler.zeroconf.Services.service;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ServiceFilterTest {

  private static ServiceFilter filter(
      Optional<String> name, Optional<Integer> port, Map<String, String> txt) {
    return new ServiceFilter(name, port, txt);
  }

  @Test
  void emptyFilterAcceptsEverything() {
    assertThat(filter(Optional.empty(), Optional.empty(), Map.of()).matches(service("a", 1)))
        .isTrue();
  }

  @Test
  void nameMatchesIgnoringCase() {
    ServiceFilter f = filter(Optional.of("Printer"), Optional.empty(), Map.of());

    assertThat(f.matches(service("printer", 1))).isTrue();
    assertThat(f.matches(service("printer 2", 1))).isFalse();
  }

  @Test
  void portMustBeEqual() {
    ServiceFilter f = filter(Optional.empty(), Optional.of(8080), Map.of());

    assertThat(f.matches(service("a", 8080))).isTrue();
    assertThat(f.matches(service("a", 8081))).isFalse();
  }

  @Test
  void everyTxtRecordMustMatchWithCaseInsensitiveKeysAndExactValues() {
    ServiceFilter f = filter(Optional.empty(), Optional.empty(), Map.of("model", "X1", "rev", "2"));

    assertThat(f.matches(service("a", 1, TxtEntry.of("MODEL", "X1"), TxtEntry.of("rev", "2"))))
        .isTrue();
    assertThat(f.matches(service("a", 1, TxtEntry.of("model", "X1")))).isFalse();
    assertThat(f.matches(service("a", 1, TxtEntry.of("model", "x1"), TxtEntry.of("rev", "2"))))
        .isFalse();
  }

  @Test
  void emptyValueMatchesABooleanAttribute() {
    ServiceFilter f = filter(Optional.empty(), Optional.empty(), Map.of("duplex", ""));

    assertThat(f.matches(service("a", 1, new TxtEntry("duplex", Optional.empty())))).isTrue();
    assertThat(f.matches(service("a", 1))).isFalse();
  }
}
