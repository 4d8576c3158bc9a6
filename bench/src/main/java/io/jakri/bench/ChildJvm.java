package io.jakri.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM (the agent or the floor program) whose memory and threads are read from outside: RSS
 * and thread count from {@code /proc/<pid>/status}, heap after a full GC through {@code jcmd} and
 * {@code jstat}. Output goes to a log file in the run directory.
 */
final class ChildJvm implements AutoCloseable {

  private final Process process;
  private final Path log;
  private final long startedAt;
  private final Path javaBinary;

  private ChildJvm(Process process, Path log, long startedAt, Path javaBinary) {
    this.process = process;
    this.log = log;
    this.startedAt = startedAt;
    this.javaBinary = javaBinary;
  }

  /** Starts {@code java <jvmFlags> <args>}, logging to {@code log}. */
  static ChildJvm start(List<String> jvmFlags, List<String> args, Path log) throws IOException {
    return start(jvmFlags, java.util.Map.of(), args, log);
  }

  /** Starts {@code java <jvmFlags> <args>} with extra environment variables. */
  static ChildJvm start(
      List<String> jvmFlags, java.util.Map<String, String> env, List<String> args, Path log)
      throws IOException {
    return start(Path.of(System.getProperty("java.home"), "bin", "java"), jvmFlags, env, args, log);
  }

  /** Starts {@code <java> <jvmFlags> <args>}: another runtime than this JVM's. */
  static ChildJvm start(
      Path java,
      List<String> jvmFlags,
      java.util.Map<String, String> env,
      List<String> args,
      Path log)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(java.toString());
    command.addAll(jvmFlags);
    command.addAll(args);
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    builder.environment().putAll(env);
    long startedAt = System.nanoTime();
    return new ChildJvm(builder.start(), log, startedAt, java);
  }

  long pid() {
    return process.pid();
  }

  /** System.nanoTime() just before the process was spawned. */
  long startedAt() {
    return startedAt;
  }

  boolean alive() {
    return process.isAlive();
  }

  Path log() {
    return log;
  }

  /** Resident set size in KiB. */
  long rssKb() throws IOException {
    return statusField("VmRSS:");
  }

  /** CPU time (user + system) the process has used so far, in ms. */
  long cpuMs() throws IOException {
    return cpuMs(Path.of("/proc", Long.toString(pid()), "stat"));
  }

  /** User + kernel CPU time in ms of the process whose {@code /proc/<pid>/stat} this is. */
  static long cpuMs(Path procStat) throws IOException {
    String stat = Files.readString(procStat);
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    // fields[0] is field 3 (state); utime and stime are fields 14 and 15, in clock ticks (100/s).
    return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * 10;
  }

  /** Open file descriptors (sockets, epoll, jars, logs) of the process, from /proc/pid/fd. */
  long openFiles() throws IOException {
    try (java.util.stream.Stream<Path> fds =
        Files.list(Path.of("/proc", Long.toString(pid()), "fd"))) {
      return fds.count();
    }
  }

  /** Kernel-mode CPU time (stime) the process has used so far, in ms. */
  long systemCpuMs() throws IOException {
    String stat = Files.readString(Path.of("/proc", Long.toString(pid()), "stat"));
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(fields[12]) * 10;
  }

  /**
   * Java threads the JVM has started since it began ({@code java.threads.started}, read with {@code
   * jcmd PerfCounter.print}): a figure that grows per request means a thread made per request.
   */
  long threadsStarted() throws IOException, InterruptedException {
    String out = run(List.of(jdkTool("jcmd"), Long.toString(pid()), "PerfCounter.print"));
    for (String line : out.split("\n")) {
      if (line.startsWith("java.threads.started=")) {
        return Long.parseLong(line.substring(line.indexOf('=') + 1).strip());
      }
    }
    throw new IOException("no java.threads.started in jcmd PerfCounter.print of " + pid());
  }

  /** Number of threads (JVM-internal ones included). */
  long threads() throws IOException {
    return statusField("Threads:");
  }

  /** Java heap in use right after a full GC, in bytes (young + old, from jstat). */
  long heapAfterGcBytes() throws IOException, InterruptedException {
    run(List.of(jdkTool("jcmd"), Long.toString(pid()), "GC.run"));
    String out = run(List.of(jdkTool("jstat"), "-gc", Long.toString(pid())));
    String[] lines = out.strip().split("\n");
    String[] header = lines[0].trim().split("\\s+");
    String[] values = lines[lines.length - 1].trim().split("\\s+");
    double usedKb = 0;
    for (int i = 0; i < header.length && i < values.length; i++) {
      if (List.of("S0U", "S1U", "EU", "OU").contains(header[i])) {
        usedKb += Double.parseDouble(values[i]);
      }
    }
    return (long) (usedKb * 1024);
  }

  private long statusField(String field) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid()), "status"))) {
      if (line.startsWith(field)) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new IOException(field + " not in /proc/" + pid() + "/status");
  }

  /**
   * Waits until the log contains {@code text}; returns System.nanoTime() then. Fails when the
   * process exits first or after {@code timeout}.
   */
  long awaitLog(String text, Duration timeout) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (Files.readString(log).contains(text)) {
        return System.nanoTime();
      }
      if (!alive()) {
        throw new IllegalStateException("exited: " + Files.readString(log));
      }
      Thread.sleep(10);
    }
    throw new IllegalStateException("no '" + text + "' after " + timeout + " in " + log);
  }

  /** {@code jcmd VM.native_memory summary} (the child must run with NativeMemoryTracking). */
  String nativeMemorySummary() throws IOException, InterruptedException {
    return run(List.of(jdkTool("jcmd"), Long.toString(pid()), "VM.native_memory", "summary"));
  }

  /** The child's runtime's tool if it has one (a JDK), else this JVM's (a JRE has none). */
  private String jdkTool(String name) {
    Path own = javaBinary.resolveSibling(name);
    if (Files.isExecutable(own)) {
      return own.toString();
    }
    return Path.of(System.getProperty("java.home"), "bin", name).toString();
  }

  private static String run(List<String> command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IOException(command + " failed: " + new String(out));
    }
    return new String(out);
  }

  /**
   * Sends SIGTERM and waits up to {@code max} for the process to exit; returns the nanoseconds from
   * just before the signal until the exit was seen, or empty (and SIGKILLs it) when it had not
   * exited by then.
   */
  java.util.OptionalLong terminate(Duration max) throws InterruptedException {
    long t0 = System.nanoTime();
    process.destroy();
    if (process.waitFor(max.toMillis(), TimeUnit.MILLISECONDS)) {
      return java.util.OptionalLong.of(System.nanoTime() - t0);
    }
    kill();
    return java.util.OptionalLong.empty();
  }

  /** SIGKILL, and waits for the exit. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
  }

  /** SIGTERM, then SIGKILL after 20 s. */
  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(Duration.ofSeconds(20).toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      process.waitFor();
    }
  }
}
