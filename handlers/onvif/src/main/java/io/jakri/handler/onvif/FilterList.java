package io.jakri.handler.onvif;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * One of Akri's filter lists ({@code ipAddresses}, {@code macAddresses}, {@code scopes}, {@code
 * uuids}): an action and the items it applies to.
 *
 * <p>The rule is Akri's ({@code execute_filter} in its onvif handler), kept exactly so that a
 * Configuration selects the same cameras:
 *
 * <ul>
 *   <li>{@code Exclude} with no items lets everything through, even a camera whose value is
 *       unknown;
 *   <li>otherwise a camera whose value is unknown (e.g. {@code GetNetworkInterfaces} failed) is
 *       left out;
 *   <li>{@code Include} keeps a camera when at least one item matches one of its values, {@code
 *       Exclude} leaves it out in that case; so {@code Include} with no items leaves every camera
 *       out.
 * </ul>
 *
 * A missing filter (no such key in the details) is no filter at all. Immutable.
 *
 * @param action what a match means
 * @param items the values to match
 */
public record FilterList(Action action, List<String> items) {

  /** What a match means. The names are Akri's, case-sensitive. */
  public enum Action {
    Include,
    Exclude
  }

  /** How a camera's value is compared with an item. */
  public enum Match {
    /** Case-insensitive equality (Akri: IP addresses, MAC addresses, UUIDs). */
    IGNORE_CASE {
      @Override
      boolean matches(String value, String item) {
        return value.toLowerCase(Locale.ROOT).equals(item.toLowerCase(Locale.ROOT));
      }
    },
    /**
     * The value is a whitespace-separated list (a {@code d:Scopes} element); one of its entries
     * equals the item exactly (Akri: scopes).
     */
    ANY_WORD {
      @Override
      boolean matches(String value, String item) {
        for (String word : value.trim().split("\\s+")) {
          if (word.equals(item)) {
            return true;
          }
        }
        return false;
      }
    };

    abstract boolean matches(String value, String item);
  }

  public FilterList {
    Objects.requireNonNull(action, "action");
    items = List.copyOf(items);
  }

  /**
   * Whether a camera is left out by this filter.
   *
   * @param values the camera's values, empty when unknown
   */
  public boolean filtersOut(Optional<List<String>> values, Match match) {
    if (items.isEmpty() && action == Action.Exclude) {
      return false;
    }
    if (values.isEmpty()) {
      return true;
    }
    boolean anyMatch =
        items.stream()
            .anyMatch(item -> values.get().stream().anyMatch(v -> match.matches(v, item)));
    return action == Action.Include ? !anyMatch : anyMatch;
  }

  /** As {@link #filtersOut(Optional, Match)} for an optional filter: none filters nothing out. */
  public static boolean filtersOut(
      Optional<FilterList> filter, Optional<List<String>> values, Match match) {
    return filter.isPresent() && filter.get().filtersOut(values, match);
  }
}
