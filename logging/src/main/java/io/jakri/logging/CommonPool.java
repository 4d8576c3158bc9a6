package io.jakri.logging;

import java.util.Properties;

/**
 * The JDK's common fork-join pool sized for the API client, set by both binaries' {@code main}
 * before anything reads it.
 *
 * <p>The JDK's {@code HttpClient} (fabric8's transport) hands every completed {@code sendAsync} on
 * to {@code CompletableFuture}'s default executor. That executor is the common pool only when the
 * pool's parallelism is above 1; at 1 (a JVM that sees one or two processors, which is every pod
 * under the chart's 500m CPU limit) it starts a new thread for each completion: one thread created
 * and torn down per API request (JFR on the cluster bench's agent: 765 threads started for about
 * 700 Allocates). A parallelism of 2 makes the common pool that executor; its two workers start on
 * first use and end after a minute idle. A value the user sets ({@code -D...}) is kept.
 */
public final class CommonPool {

  /** The JDK's system property for the common pool's parallelism. */
  public static final String PARALLELISM = "java.util.concurrent.ForkJoinPool.common.parallelism";

  /** The smallest parallelism at which {@code CompletableFuture} uses the common pool. */
  public static final int MINIMUM = 2;

  private CommonPool() {}

  /** Sets the parallelism in this JVM unless given; call first thing in {@code main}. */
  public static void size() {
    size(System.getProperties());
  }

  /** Sets the parallelism in {@code properties} unless already there. */
  static void size(Properties properties) {
    properties.putIfAbsent(PARALLELISM, Integer.toString(MINIMUM));
  }
}
