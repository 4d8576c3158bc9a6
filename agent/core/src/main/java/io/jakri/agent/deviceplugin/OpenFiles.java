package io.jakri.agent.deviceplugin;

import java.lang.management.ManagementFactory;
import java.util.OptionalLong;

/**
 * The process's open files and its limit on them ({@code RLIMIT_NOFILE}): the boundary {@link
 * FileHeadroom} reads. Either may be unknown (not a Unix JVM).
 */
public interface OpenFiles {

  /** Files (descriptors) open now. Costs a directory listing of {@code /proc/self/fd} on Linux. */
  OptionalLong open();

  /** The most files the process may have open. Cheap. */
  OptionalLong limit();

  /** This process's, as the JVM reports them. */
  static OpenFiles ofProcess() {
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
      return new OpenFiles() {
        @Override
        public OptionalLong open() {
          return known(unix.getOpenFileDescriptorCount());
        }

        @Override
        public OptionalLong limit() {
          return known(unix.getMaxFileDescriptorCount());
        }
      };
    }
    return new OpenFiles() {
      @Override
      public OptionalLong open() {
        return OptionalLong.empty();
      }

      @Override
      public OptionalLong limit() {
        return OptionalLong.empty();
      }
    };
  }

  private static OptionalLong known(long value) {
    return value >= 0 ? OptionalLong.of(value) : OptionalLong.empty();
  }
}
