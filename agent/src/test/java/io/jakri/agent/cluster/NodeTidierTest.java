package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class NodeTidierTest {

  @Test
  void resourceNamesAreEscapedAsJsonPointerTokens() {
    assertThat(JsonPointer.escape("akri.sh/echo-8120fe")).isEqualTo("akri.sh~1echo-8120fe");
    assertThat(JsonPointer.escape("a~b/c")).isEqualTo("a~0b~1c");
    // "~1" in a name must not turn into "/" on the way back: "~" is escaped first.
    assertThat(JsonPointer.escape("x~1y")).isEqualTo("x~01y");
  }
}
