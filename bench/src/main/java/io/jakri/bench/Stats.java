package io.jakri.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Percentiles over samples (nearest-rank). */
final class Stats {

  private Stats() {}

  /** The p-th percentile (0 < p ≤ 100) of {@code samples}, nearest-rank. */
  static double percentile(List<Double> samples, double p) {
    if (samples.isEmpty()) {
      return Double.NaN;
    }
    List<Double> sorted = new ArrayList<>(samples);
    Collections.sort(sorted);
    int rank = (int) Math.ceil(p / 100.0 * sorted.size());
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1)));
  }

  static double median(List<Double> samples) {
    if (samples.isEmpty()) {
      return Double.NaN;
    }
    List<Double> sorted = new ArrayList<>(samples);
    Collections.sort(sorted);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }
}
