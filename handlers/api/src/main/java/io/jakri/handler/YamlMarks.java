package io.jakri.handler;

import java.io.StringReader;
import java.util.Optional;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * Where something is written in a YAML text, so that a problem can say {@code line 3, column 5}:
 * the one place handlers and the agent find a field's position and a syntax error's. Positions
 * count from 1. Paths are those of {@link Details}' messages: {@code brokers[1].url}, {@code
 * properties.MQTT_X}; a key may hold dots ({@code metadata.labels.akri.sh/instance}), the longest
 * key that fits is taken.
 */
public final class YamlMarks {

  private YamlMarks() {}

  /** {@code "line L, column C"}. */
  public static String lineColumn(Mark mark) {
    return "line " + (mark.getLine() + 1) + ", column " + (mark.getColumn() + 1);
  }

  /**
   * The mark of a YAML syntax error found in {@code e} or its causes (the problem's, else the
   * context's), with SnakeYAML's words for the problem.
   */
  public static Optional<SyntaxError> syntaxError(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof MarkedYAMLException marked) {
        Mark mark =
            marked.getProblemMark() != null ? marked.getProblemMark() : marked.getContextMark();
        if (mark != null) {
          String problem =
              marked.getProblem() != null ? marked.getProblem() : "unreadable document";
          return Optional.of(new SyntaxError(mark, problem));
        }
      }
    }
    return Optional.empty();
  }

  /**
   * The first syntax error of {@code text}, found by running SnakeYAML's parser only (events:
   * nothing is constructed, so no alias is expanded); empty when there is none or the text is
   * longer than {@link SafeYaml#MAX_CODE_POINTS}.
   */
  public static Optional<SyntaxError> firstSyntaxError(String text) {
    if (text == null || text.length() > SafeYaml.MAX_CODE_POINTS) {
      return Optional.empty();
    }
    try {
      for (var ignored :
          SafeYaml.parser(SafeYaml.MAX_CODE_POINTS, 64).parse(new StringReader(text))) {
        // every event, up to the first error
      }
    } catch (RuntimeException e) {
      return syntaxError(e);
    }
    return Optional.empty();
  }

  /** A syntax error: where, and SnakeYAML's words for it. */
  public record SyntaxError(Mark mark, String problem) {
    /** {@code "line L, column C"}. */
    public String lineColumn() {
      return YamlMarks.lineColumn(mark);
    }
  }

  /**
   * The mark of {@code path} below {@code root} (a field's key, a list item's start), or of its
   * nearest enclosing node that exists; null when not even the first step exists. Walks at most the
   * path's length, so aliases (even recursive ones) cannot make it loop or blow up.
   */
  public static Mark find(Node root, String path) {
    Node node = root;
    Mark mark = null;
    String rest = path;
    while (node != null && !rest.isEmpty()) {
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
