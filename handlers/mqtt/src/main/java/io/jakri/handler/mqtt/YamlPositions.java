package io.jakri.handler.mqtt;

import io.jakri.handler.SafeYaml;
import io.jakri.handler.YamlMarks;
import java.io.StringReader;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.Node;

/**
 * Where each field of a details document starts, so errors can say {@code (line 3, column 5)}.
 * Paths are those {@link io.jakri.handler.Details} uses: {@code brokers[1]}, {@code
 * properties.MQTT_X}. The document is composed once; {@link YamlMarks#find} walks only the path
 * asked for (an alias, even a recursive or billion-laughs one, is never walked whole).
 */
final class YamlPositions {

  private final Node root;

  private YamlPositions(Node root) {
    this.root = root;
  }

  /** The positions in {@code yaml}, or the syntax error with its position as the message. */
  static YamlPositions of(String yaml) throws SyntaxError {
    if (yaml == null || yaml.isBlank() || yaml.length() > SafeYaml.MAX_CODE_POINTS) {
      // Too big: the details parser refuses it in its own words, without a position.
      return new YamlPositions(null);
    }
    try {
      return new YamlPositions(
          SafeYaml.parser(SafeYaml.MAX_CODE_POINTS, 20).compose(new StringReader(yaml)));
    } catch (MarkedYAMLException e) {
      throw new SyntaxError(
          "invalid YAML"
              + YamlMarks.syntaxError(e)
                  .map(s -> " (" + s.lineColumn() + "): " + s.problem())
                  .orElse(": unreadable document"));
    } catch (YAMLException e) {
      // Size, alias or depth limits: the details parser reports these in its own words.
      return new YamlPositions(null);
    }
  }

  /** {@code " (line L, column C)"} for a field (or its nearest enclosing field), or "". */
  String at(String path) {
    Mark mark = root == null || path.isEmpty() ? null : YamlMarks.find(root, path);
    return mark == null ? "" : " (" + YamlMarks.lineColumn(mark) + ")";
  }

  /** A details text that is not YAML; the message carries the position. */
  static final class SyntaxError extends Exception {
    SyntaxError(String message) {
      super(message);
    }
  }
}
