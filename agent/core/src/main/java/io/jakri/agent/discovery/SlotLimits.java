package io.jakri.agent.discovery;

/**
 * The most slots (capacity × devices) the agent keeps per Configuration and in all: each slot costs
 * memory (its entry in the Instance, its device in ListAndWatch), so a Configuration with a huge
 * capacity or many devices must not exhaust the agent's memory limit and stop every other
 * Configuration. Devices beyond the limits are refused, not half-applied.
 *
 * @param perConfiguration most slots of one Configuration on this node
 * @param perAgent most slots of all Configurations on this node
 */
public record SlotLimits(long perConfiguration, long perAgent) {

  /**
   * Default per Configuration. The defaults are sized to the chart's 384 MiB memory limit (the
   * measurements are in the operations guide, "Memory limits").
   */
  public static final long DEFAULT_PER_CONFIGURATION = 100_000;

  /** Default for all Configurations together (see {@link #DEFAULT_PER_CONFIGURATION}). */
  public static final long DEFAULT_PER_AGENT = 150_000;

  public SlotLimits {
    if (perConfiguration < 1 || perAgent < 1) {
      throw new IllegalArgumentException("slot limits must be at least 1");
    }
  }

  public static SlotLimits defaults() {
    return new SlotLimits(DEFAULT_PER_CONFIGURATION, DEFAULT_PER_AGENT);
  }
}
