package io.jakri.handler.opcua;

import java.util.List;
import java.util.Objects;

/**
 * Akri's {@code applicationNames} filter: a list of application names that are the only ones
 * admitted ({@link Action#INCLUDE}) or the only ones refused ({@link Action#EXCLUDE}). Names
 * compare exactly (case and all), as Akri's {@code should_include} does; an Include with no items
 * admits nothing, an Exclude with no items admits everything.
 *
 * @param action Include or Exclude
 * @param items the application names
 */
public record ApplicationNameFilter(Action action, List<String> items) {

  /** What the items mean. */
  public enum Action {
    INCLUDE("Include"),
    EXCLUDE("Exclude");

    private final String yaml;

    Action(String yaml) {
      this.yaml = yaml;
    }

    /** The spelling in the details ({@code Include}, {@code Exclude}). */
    public String yaml() {
      return yaml;
    }
  }

  /** No filter at all: every application name is admitted. */
  public static final ApplicationNameFilter NONE =
      new ApplicationNameFilter(Action.EXCLUDE, List.of());

  public ApplicationNameFilter {
    Objects.requireNonNull(action, "action");
    items = List.copyOf(items == null ? List.of() : items);
  }

  /** Whether a server with this application name (null counts as empty) is kept. */
  public boolean admits(String applicationName) {
    boolean listed = items.contains(applicationName == null ? "" : applicationName);
    return action == Action.INCLUDE ? listed : !listed;
  }
}
