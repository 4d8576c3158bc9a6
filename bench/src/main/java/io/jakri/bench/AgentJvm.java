package io.jakri.bench;

import java.util.List;
import java.util.Map;

/**
 * The JVM flags the bench starts the agent (and the floor program) with unless told otherwise: the
 * flags recommended for the chart, measured in bench/README.md. {@code -XX:MaxRAM=512m} stands in
 * for a 512 MiB container memory limit (in the chart the limit itself sets it).
 */
final class AgentJvm {

  private AgentJvm() {}

  /** The recommended flags; an AppCDS archive is added unless {@code --no-cds}. */
  static final List<String> RECOMMENDED =
      List.of(
          "-XX:+UseSerialGC",
          "-XX:TieredStopAtLevel=1",
          "-XX:ReservedCodeCacheSize=32m",
          "-Xss256k",
          "-XX:MaxRAM=512m",
          "-XX:MaxRAMPercentage=75",
          "-Dio.grpc.netty.useCustomAllocator=false",
          "-Dio.grpc.netty.shaded.io.netty.allocator.type=unpooled");

  /** Environment variables recommended for the chart's agent container (none needed). */
  static final Map<String, String> RECOMMENDED_ENV = Map.of();
}
