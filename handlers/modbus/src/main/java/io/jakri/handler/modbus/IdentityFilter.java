package io.jakri.handler.modbus;

import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A filter on one identification object (vendor, product code or revision), in Akri's style: an
 * action and the items it applies to. Items are exact strings, or Java regular expressions that
 * must match the whole value when {@code match: Regex}. {@code Include} admits a value one item
 * matches (so with no items nothing), {@code Exclude} admits a value no item matches (so with no
 * items everything). Immutable.
 *
 * @param action what a match means
 * @param match how items compare
 * @param items the strings or expressions
 */
record IdentityFilter(Action action, Match match, List<String> items) {

  /** What a match means; the names are Akri's. */
  enum Action {
    Include,
    Exclude
  }

  /** How an item is compared with a value. */
  enum Match {
    Exact,
    Regex
  }

  /** No filter: everything is admitted. */
  static final IdentityFilter NONE = new IdentityFilter(Action.Exclude, Match.Exact, List.of());

  IdentityFilter {
    Objects.requireNonNull(action, "action");
    Objects.requireNonNull(match, "match");
    items = List.copyOf(items);
    if (match == Match.Regex) {
      items.forEach(Pattern::compile);
    }
  }

  boolean admits(String value) {
    boolean matched = false;
    for (String item : items) {
      if (match == Match.Exact ? item.equals(value) : Pattern.matches(item, value)) {
        matched = true;
        break;
      }
    }
    return action == Action.Include ? matched : !matched;
  }
}
