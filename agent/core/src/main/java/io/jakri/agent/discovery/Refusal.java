package io.jakri.agent.discovery;

/** Why the agent refuses a Configuration, or some of its devices. */
public enum Refusal {
  /** Devices in a class the Configuration may not use ({@link ClassPolicy}). */
  CLASS,
  /** brokerProperties set a reserved env name and the operator did not allow it. */
  RESERVED_ENV,
  /** Devices beyond the slot limits ({@link SlotLimits}). */
  SLOTS
}
