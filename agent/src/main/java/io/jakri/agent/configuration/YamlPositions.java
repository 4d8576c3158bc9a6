package io.jakri.agent.configuration;

import io.jakri.handler.SafeYaml;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * Where a field of a Configuration file is written, so that a problem can say {@code (line 12,
 * column 7)} as the handlers' checks of discoveryDetails do. The text is composed into SnakeYAML's
 * nodes (which keep their marks) only when the first position is asked for, once per file: a valid
 * file costs nothing. Paths are those of the parser's messages ({@code
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
    Mark mark = mark(all.get(index), path);
    return mark == null
        ? ""
        : " (line " + (mark.getLine() + 1) + ", column " + (mark.getColumn() + 1) + ")";
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

  /**
   * The mark of {@code path} below {@code root}, or of its nearest existing parent; null when not
   * even the first step exists. Walks at most the path's length (aliases cannot loop it).
   */
  static Mark mark(Node root, String path) {
    Node node = root;
    Mark mark = null;
    String rest = path;
    while (!rest.isEmpty()) {
      if (rest.charAt(0) == '[') {
        int close = rest.indexOf(']');
        if (!(node instanceof SequenceNode sequence) || close < 0) {
          break;
        }
        int i;
        try {
          i = Integer.parseInt(rest.substring(1, close));
        } catch (NumberFormatException e) {
          break;
        }
        if (i < 0 || i >= sequence.getValue().size()) {
          break;
        }
        node = sequence.getValue().get(i);
        mark = node.getStartMark();
        rest = rest.substring(close + 1);
      } else {
        if (mark != null && rest.charAt(0) == '.') {
          rest = rest.substring(1);
        }
        if (!(node instanceof MappingNode mapping)) {
          break;
        }
        NodeTuple best = null;
        int length = -1;
        for (NodeTuple tuple : mapping.getValue()) {
          // A key of at least one character: every step consumes some of the path.
          if (tuple.getKeyNode() instanceof ScalarNode key
              && !key.getValue().isEmpty()
              && key.getValue().length() > length
              && follows(rest, key.getValue())) {
            best = tuple;
            length = key.getValue().length();
          }
        }
        if (best == null) {
          break;
        }
        mark = best.getKeyNode().getStartMark();
        node = best.getValueNode();
        rest = rest.substring(length);
      }
    }
    return mark;
  }

  /** Whether {@code path} starts with {@code key} as a whole step. */
  private static boolean follows(String path, String key) {
    if (!path.startsWith(key)) {
      return false;
    }
    if (path.length() == key.length()) {
      return true;
    }
    char next = path.charAt(key.length());
    return next == '.' || next == '[';
  }
}
