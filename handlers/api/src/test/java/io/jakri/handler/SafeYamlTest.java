package io.jakri.handler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SafeYamlTest {

  @Test
  void billionLaughsAreRefused() {
    String laughs =
        "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
            + "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
            + "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n";
    assertThatThrownBy(() -> SafeYaml.loadMap(laughs)).isInstanceOf(InvalidDetailsException.class);
  }

  @Test
  void javaTypeTagsAreRefused() {
    assertThatThrownBy(() -> SafeYaml.loadMap("x: !!javax.script.ScriptEngineManager []"))
        .isInstanceOf(InvalidDetailsException.class);
  }

  @Test
  void documentsLargerThanTheLimitAreRefusedBeforeParsing() {
    String big = "k: \"" + "x".repeat(SafeYaml.MAX_CODE_POINTS) + "\"";
    assertThatThrownBy(() -> SafeYaml.loadMap(big))
        .hasMessageContaining(String.valueOf(SafeYaml.MAX_CODE_POINTS));
  }

  @Test
  void deepNestingIsRefused() {
    assertThatThrownBy(() -> SafeYaml.loadMap("k: " + "[".repeat(100) + "]".repeat(100)))
        .isInstanceOf(InvalidDetailsException.class);
  }

  @Test
  void aTopLevelValueThatIsNotAMappingIsRefused() {
    assertThatThrownBy(() -> SafeYaml.loadMap("- a\n- b\n"))
        .isInstanceOf(InvalidDetailsException.class);
  }

  @Test
  void selfReferencesAreDetected() {
    List<Object> list = new ArrayList<>();
    list.add(list);
    assertThat(SafeYaml.recursive(list)).isTrue();
    assertThat(SafeYaml.recursive(List.of(List.of("a")))).isFalse();
  }
}
