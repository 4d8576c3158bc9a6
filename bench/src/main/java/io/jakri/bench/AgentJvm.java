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
          "-Xmn3m",
          "-XX:CICompilerCount=1",
          "-XX:MaxRAM=512m",
          "-XX:MaxRAMPercentage=75",
          "-Dio.grpc.netty.useCustomAllocator=false",
          "-Dio.grpc.netty.shaded.io.netty.allocator.type=unpooled");

  /**
   * Added for cluster mode (what the chart runs): C1 compiles a method after a quarter of the usual
   * invocations. Without it, the Allocate path (a slot claim through fabric8, Jackson and Vert.x)
   * still ran interpreted after 600 Allocates, because the compile queue stays busy with the API
   * client's code (JFR found half the agent's samples in interpreted frames). It costs idle RSS and
   * start-up CPU, which a standalone agent need not pay. The figures: bench/README.md, "Recommended
   * JVM flags for the chart".
   */
  static final List<String> CLUSTER_EXTRA = List.of("-XX:CompileThresholdScaling=0.25");

  /**
   * In the recommended flags for a standalone agent only: one C1 compiler thread instead of the
   * ergonomic 2 (on 2 cores) saves idle RSS and did not slow the start or the restart recovery
   * measurably (figures in bench/README.md). Cluster mode keeps the ergonomic count: there the
   * compile queue is what kept the Allocate path interpreted.
   */
  static final List<String> STANDALONE_ONLY = List.of("-XX:CICompilerCount=1");

  /** Environment variables recommended for the chart's agent container (none needed). */
  static final Map<String, String> RECOMMENDED_ENV = Map.of();
}
