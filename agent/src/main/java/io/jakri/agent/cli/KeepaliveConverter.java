package io.jakri.agent.cli;

import io.jakri.agent.external.ExternalHandlers;
import io.jakri.logging.DurationText;
import java.time.Duration;
import picocli.CommandLine;

/** A keepalive time: a duration of at least gRPC's floor, 10s. */
final class KeepaliveConverter implements CommandLine.ITypeConverter<Duration> {
  @Override
  public Duration convert(String value) {
    Duration d = new DurationText.Converter().convert(value);
    if (d.compareTo(ExternalHandlers.Settings.MIN_KEEPALIVE) < 0) {
      throw new CommandLine.TypeConversionException(
          "'" + value + "' is below gRPC's keepalive floor (use 10s or more, e.g. 30s, 5m)");
    }
    return d;
  }
}
