package io.jakri.bench;

import java.util.List;

/** The JVM flags the bench starts the agent with unless told otherwise. */
final class AgentJvm {

  private AgentJvm() {}

  /** The flags recommended for the chart (see README); empty means the JVM's defaults. */
  static final List<String> RECOMMENDED = List.of();
}
