package io.jakri.handler.udev;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A zram disk this test created through {@code /sys/class/zram-control} (root): reading {@code
 * hot_add} creates {@code /dev/zramN} and answers N; {@link #close()} writes N to {@code
 * hot_remove}. Only ever removes the disk it created.
 */
public final class ZramDisk implements AutoCloseable {

  public static final Path CONTROL = Path.of("/sys/class/zram-control");

  /** Nanos (System.nanoTime) just before the hot-add. */
  public final long startedNanos;

  public final int index;
  private boolean removed;

  private ZramDisk(int index, long startedNanos) {
    this.index = index;
    this.startedNanos = startedNanos;
  }

  /** Whether zram disks can be hot-added here. */
  public static boolean available() {
    return Files.isReadable(CONTROL.resolve("hot_add"))
        && Files.isWritable(CONTROL.resolve("hot_remove"))
        && KernelFacility.root();
  }

  public static ZramDisk add() throws IOException {
    long started = System.nanoTime();
    String answer = Files.readString(CONTROL.resolve("hot_add")).strip();
    return new ZramDisk(Integer.parseInt(answer), started);
  }

  public String name() {
    return "zram" + index;
  }

  public String devnode() {
    return "/dev/" + name();
  }

  public String devpath() {
    return "/devices/virtual/block/" + name();
  }

  /** Removes the disk (idempotent); nanos just before the removal. */
  public long remove() throws IOException {
    long at = System.nanoTime();
    if (!removed) {
      removed = true;
      Files.writeString(CONTROL.resolve("hot_remove"), Integer.toString(index));
    }
    return at;
  }

  @Override
  public void close() throws IOException {
    remove();
  }
}
