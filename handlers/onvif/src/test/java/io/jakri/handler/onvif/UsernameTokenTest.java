package io.jakri.handler.onvif;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class UsernameTokenTest {

  @Test
  void digestMatchesAkrisTestVector() {
    // akri username_token.rs test_generate_token
    UsernameToken token =
        UsernameToken.of(
            "abcdefe",
            "1234567",
            "nonce".getBytes(StandardCharsets.UTF_8),
            "2000-01-01T12:34:56:789Z");
    assertThat(token.nonce()).isEqualTo("bm9uY2U=");
    assertThat(token.digest()).isEqualTo("AGsoQQ+qNJu6Ha7h/QAPoQvYcV0=");
    assertThat(token.username()).isEqualTo("abcdefe");
  }

  @Test
  void freshTokenUsesTheClockAndA16ByteNonce() {
    Clock clock = Clock.fixed(Instant.parse("2026-11-24T05:06:07.123456Z"), ZoneOffset.UTC);
    UsernameToken token = UsernameToken.create("u", "p", clock, new SecureRandom());
    assertThat(token.created()).isEqualTo("2026-11-24T05:06:07.123Z");
    byte[] nonce = java.util.Base64.getDecoder().decode(token.nonce());
    assertThat(nonce).hasSize(16);
    assertThat(token.digest()).isEqualTo(UsernameToken.digest(nonce, token.created(), "p"));
    assertThat(token.toString()).doesNotContain(token.digest());
  }

  @Test
  void securityHeaderEscapesTheUsername() {
    UsernameToken token = UsernameToken.of("a<b&", "p", new byte[] {1}, "t");
    assertThat(token.securityHeader()).contains("<wsse:Username>a&lt;b&amp;</wsse:Username>");
  }
}
