package io.jakri.bench;

import java.util.Optional;

/**
 * One measured figure, optionally with the physical floor measured beside it in the same run.
 *
 * @param name machine-readable name (printed as {@code BENCH name value unit})
 * @param value the median over the runs
 * @param unit e.g. {@code ms}, {@code MB}
 * @param floor the floor's median, when the figure has one
 * @param target the target, as text for the table
 * @param met whether the target is met; empty when it cannot be judged from this figure alone
 */
record Figure(
    String name,
    double value,
    String unit,
    Optional<Double> floor,
    String target,
    Optional<Boolean> met) {

  static Figure of(String name, double value, String unit, String target, Optional<Boolean> met) {
    return new Figure(name, value, unit, Optional.empty(), target, met);
  }

  static Figure withFloor(
      String name, double value, double floor, String unit, String target, Optional<Boolean> met) {
    return new Figure(name, value, unit, Optional.of(floor), target, met);
  }

  /** value / floor, when there is a floor. */
  Optional<Double> ratio() {
    return floor.filter(f -> f > 0).map(f -> value / f);
  }
}
