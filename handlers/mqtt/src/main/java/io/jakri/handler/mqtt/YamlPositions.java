package io.jakri.handler.mqtt;

import io.jakri.handler.SafeYaml;
import java.io.StringReader;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * Where each field of a details document starts, so errors can say {@code (line 3, column 5)}.
 * Paths are those {@link io.jakri.handler.Details} uses: {@code brokers[1]}, {@code
 * properties.MQTT_X}.
 */
final class YamlPositions {

  private final Map<String, Mark> marks;

  private YamlPositions(Map<String, Mark> marks) {
    this.marks = marks;
  }

  /** The positions in {@code yaml}, or the syntax error with its position as the message. */
  static YamlPositions of(String yaml) throws SyntaxError {
    Map<String, Mark> marks = new HashMap<>();
    if (yaml == null || yaml.isBlank() || yaml.length() > SafeYaml.MAX_CODE_POINTS) {
      // Too big: the details parser refuses it in its own words, without a position.
      return new YamlPositions(marks);
    }
    try {
      Node root = SafeYaml.parser(SafeYaml.MAX_CODE_POINTS, 20).compose(new StringReader(yaml));
      if (root != null) {
        walk(
            "",
            root,
            marks,
            0,
            java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>()));
      }
    } catch (MarkedYAMLException e) {
      Mark mark = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
      String problem = e.getProblem() != null ? e.getProblem() : "unreadable document";
      throw new SyntaxError(
          "invalid YAML" + (mark == null ? "" : " " + where(mark)) + ": " + problem);
    } catch (YAMLException e) {
      // Size, alias or depth limits: the details parser reports these in its own words.
    }
    return new YamlPositions(marks);
  }

  /** {@code "(line L, column C)"} for a field (or its nearest enclosing field), or "". */
  String at(String path) {
    String p = path;
    while (!p.isEmpty()) {
      Mark mark = marks.get(p);
      if (mark != null) {
        return " " + where(mark);
      }
      int cut = Math.max(p.lastIndexOf('.'), p.lastIndexOf('['));
      p = cut < 0 ? "" : p.substring(0, cut);
    }
    return "";
  }

  Optional<Mark> mark(String path) {
    return Optional.ofNullable(marks.get(path));
  }

  private static String where(Mark mark) {
    return "(line " + (mark.getLine() + 1) + ", column " + (mark.getColumn() + 1) + ")";
  }

  /** At most this many positions are kept: details are small; an attack is not walked whole. */
  private static final int MAX_MARKS = 4096;

  private static void walk(
      String path, Node node, Map<String, Mark> marks, int depth, java.util.Set<Node> seen) {
    // An alias points at a node already walked (a recursive or billion-laughs anchor would
    // otherwise be walked once per reference): each node once.
    if (depth > 20 || marks.size() >= MAX_MARKS || !seen.add(node)) {
      return;
    }
    if (node instanceof MappingNode mapping) {
      for (NodeTuple tuple : mapping.getValue()) {
        if (tuple.getKeyNode() instanceof ScalarNode key) {
          String child = path.isEmpty() ? key.getValue() : path + "." + key.getValue();
          marks.putIfAbsent(child, key.getStartMark());
          walk(child, tuple.getValueNode(), marks, depth + 1, seen);
        }
      }
    } else if (node instanceof SequenceNode sequence) {
      for (int i = 0; i < sequence.getValue().size(); i++) {
        Node item = sequence.getValue().get(i);
        String child = path + "[" + i + "]";
        marks.putIfAbsent(child, item.getStartMark());
        walk(child, item, marks, depth + 1, seen);
      }
    }
  }

  /** A details text that is not YAML; the message carries the position. */
  static final class SyntaxError extends Exception {
    SyntaxError(String message) {
      super(message);
    }
  }
}
