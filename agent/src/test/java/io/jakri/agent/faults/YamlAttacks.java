package io.jakri.agent.faults;

import java.util.LinkedHashMap;
import java.util.Map;

/** Known YAML attacks, by name, as the text an attacker would put in a file or details field. */
final class YamlAttacks {

  private YamlAttacks() {}

  /**
   * Inputs that are legal and cheap within the limits, so a parser may accept them: one 60 KB
   * scalar, 5,000 aliases of a scalar (no amplification: only collection aliases are counted) and a
   * bounded merge-key chain.
   */
  static final java.util.Set<String> HARMLESS_WITHIN_LIMITS =
      java.util.Set.of("huge-scalar-in-limit", "many-aliases", "merge-key-fanout");

  static Map<String, String> all() {
    Map<String, String> attacks = new LinkedHashMap<>();
    StringBuilder laughs = new StringBuilder("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for (int i = 1; i < 10; i++) {
      laughs.append("a").append(i).append(": &a").append(i).append(" [");
      for (int j = 0; j < 9; j++) {
        laughs.append(j == 0 ? "" : ", ").append("*a").append(i - 1);
      }
      laughs.append("]\n");
    }
    attacks.put("billion-laughs", laughs.toString());
    attacks.put("billion-laughs-in-a-map", "x: " + laughs.toString().replace("\n", "\n  "));
    attacks.put("recursive-anchor", "a: &a [*a, *a]\n");
    attacks.put("recursive-key", "&k {*k: v}: 1\n");
    attacks.put("recursive-map", "a: &a {x: {y: *a}}\n");
    attacks.put("recursive-list-deep", "a: &a [[[*a]]]\n");
    attacks.put("deep-flow-nesting", "a: " + "[".repeat(50_000) + "]".repeat(50_000));
    attacks.put("deep-block-nesting", deepBlock(2_000));
    attacks.put("deep-map-nesting", "a: " + "{b: ".repeat(20_000) + "c" + "}".repeat(20_000));
    attacks.put("global-tag-script-engine", "a: !!javax.script.ScriptEngineManager [x]\n");
    attacks.put("global-tag-url", "a: !<tag:yaml.org,2002:java.net.URL> [\"http://evil/\"]\n");
    attacks.put("local-tag", "a: !evil {x: 1}\n");
    attacks.put("float-tag-garbage", "a: !!float y\n");
    attacks.put("binary-tag-garbage", "a: !!binary '%%%%'\n");
    attacks.put("huge-document", "a: \"" + "x".repeat(3 * 1024 * 1024) + "\"\n");
    attacks.put("huge-key-count", many("k%d: v\n", 200_000));
    attacks.put("huge-scalar-in-limit", "a: \"" + "x".repeat(60_000) + "\"\n");
    attacks.put("many-documents", many("---\na: %d\n", 50_000));
    attacks.put("duplicate-keys", "a: 1\na: 2\n");
    attacks.put("many-aliases", "x: &x y\nl: [" + "*x, ".repeat(5_000) + "*x]\n");
    attacks.put("merge-key-fanout", mergeFanout());
    attacks.put("nul-and-controls", "a: \"\\0\\x1b[2J\\u202e\"\n\u0000\u0007");
    attacks.put("unpaired-surrogates", "a: \"\\ud800\"\nb: \udc00\n");
    attacks.put("bom-and-directives", "\ufeff%YAML 1.1\n%TAG ! tag:evil,2000:\n---\na: !x 1\n");
    return attacks;
  }

  private static String deepBlock(int depth) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < depth; i++) {
      s.append(" ".repeat(i)).append("k:\n");
    }
    return s.append(" ".repeat(depth)).append("v\n").toString();
  }

  private static String many(String format, int n) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < n; i++) {
      s.append(String.format(format, i));
    }
    return s.toString();
  }

  private static String mergeFanout() {
    StringBuilder s = new StringBuilder("b: &b {x: 1, y: 2}\n");
    for (int i = 0; i < 9; i++) {
      s.append("m").append(i).append(": &m").append(i).append(" {<<: [*b");
      for (int j = 0; j < i; j++) {
        s.append(", *m").append(j);
      }
      s.append("]}\n");
    }
    return s.toString();
  }
}
