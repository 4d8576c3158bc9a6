package io.jakri.handler.coap;

import java.util.List;

/**
 * Which links of an endpoint count: a link is kept when it has one of {@code rt} (if any are
 * given), one of {@code ifs} (if any are given), its path matches one {@code include} pattern (if
 * any are given) and no {@code exclude} pattern. A pattern is a path, or a prefix ending in {@code
 * *}. An endpoint with no kept link is not a device.
 *
 * @param rt resource types, any of which a link must have
 * @param ifs interface descriptions, any of which a link must have
 * @param include path patterns, one of which a link's path must match
 * @param exclude path patterns none of which a link's path may match
 */
public record LinkFilter(
    List<String> rt, List<String> ifs, List<String> include, List<String> exclude) {

  public LinkFilter {
    rt = List.copyOf(rt);
    ifs = List.copyOf(ifs);
    include = List.copyOf(include);
    exclude = List.copyOf(exclude);
  }

  static LinkFilter none() {
    return new LinkFilter(List.of(), List.of(), List.of(), List.of());
  }

  /** Whether the link is kept. */
  public boolean keeps(Link link) {
    if (!rt.isEmpty() && link.resourceTypes().stream().noneMatch(rt::contains)) {
      return false;
    }
    if (!ifs.isEmpty() && link.interfaces().stream().noneMatch(ifs::contains)) {
      return false;
    }
    String path = link.target();
    if (!include.isEmpty() && include.stream().noneMatch(p -> matches(p, path))) {
      return false;
    }
    return exclude.stream().noneMatch(p -> matches(p, path));
  }

  private static boolean matches(String pattern, String path) {
    return pattern.endsWith("*")
        ? path.startsWith(pattern.substring(0, pattern.length() - 1))
        : path.equals(pattern);
  }
}
