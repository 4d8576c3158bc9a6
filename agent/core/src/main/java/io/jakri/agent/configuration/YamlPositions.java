package io.jakri.agent.configuration;

import io.jakri.handler.SafeYaml;
import io.jakri.handler.YamlMarks;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.nodes.Node;

/**
 * Where a field of a Configuration file is written, so that a problem can say {@code (line 12,
 * column 7)} as the handlers' checks of discoveryDetails do ({@link YamlMarks} finds it). The text
 * is composed into SnakeYAML's nodes (which keep their marks) only when the first position is asked
 * for, once per file: a valid file costs nothing. Paths are those of the parser's messages ({@code
 * spec.instanceObjects[0].metadata.name}, {@code metadata.labels.akri.sh/instance}: a key may hold
 * dots, the longest key that fits is taken). Not thread-safe (one per parse).
 */
final class YamlPositions {

  /** The positions within one document of the file. */
  interface Document {
    /**
     * {@code " (line L, column C)"} where {@code path} is written (a field's key, a list item's
     * start), or of the nearest enclosing node that exists; "" when unknown.
     */
    String at(String path);
  }

  /** For a document that was not read from text (the admission webhook's): no positions. */
  static final Document NONE = path -> "";

  private final String text;
  private final int maxNestingDepth;
  private List<Node> roots;

  /**
   * @param text the whole file, already read without error by a parser of the same limits
   */
  YamlPositions(String text, int maxNestingDepth) {
    this.text = text;
    this.maxNestingDepth = maxNestingDepth;
  }

  /** The positions of the document at {@code index} (counting empty documents too) of the text. */
  Document document(int index) {
    return path -> at(index, path);
  }

  private String at(int index, String path) {
    List<Node> all = roots();
    if (index < 0 || index >= all.size()) {
      return "";
    }
    Mark mark = YamlMarks.find(all.get(index), path);
    return mark == null ? "" : " (" + YamlMarks.lineColumn(mark) + ")";
  }

  private List<Node> roots() {
    if (roots == null) {
      roots = new ArrayList<>();
      try {
        for (Node node :
            SafeYaml.parser(SafeYaml.MAX_CODE_POINTS * 16, maxNestingDepth)
                .composeAll(new StringReader(text))) {
          roots.add(node);
        }
      } catch (RuntimeException | StackOverflowError e) {
        // The text was read once already; should composing it fail anyway, messages go without.
        roots = List.of();
      }
    }
    return roots;
  }
}
