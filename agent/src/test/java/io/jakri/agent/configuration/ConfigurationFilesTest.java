package io.jakri.agent.configuration;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.jakri.agent.LogCapture;
import io.jakri.agent.model.ConfigurationSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Standing file errors are logged once per rescan sequence, again only when they change. */
class ConfigurationFilesTest {

  @TempDir Path dir;
  ScheduledExecutorService scheduler;
  LogCapture logs;
  final List<List<ConfigurationSpec>> applied = new ArrayList<>();

  @BeforeEach
  void setUp() {
    scheduler = Executors.newSingleThreadScheduledExecutor();
    logs = LogCapture.of(ConfigurationFiles.class);
  }

  @AfterEach
  void tearDown() {
    logs.close();
    scheduler.shutdownNow();
  }

  private static String configuration(String name) {
    return "apiVersion: akri.sh/v0\nkind: Configuration\nmetadata:\n  name: "
        + name
        + "\nspec:\n  discoveryHandler:\n    name: simulated\n";
  }

  private List<String> errors() {
    return logs.events().stream()
        .filter(e -> e.getLevel() == Level.ERROR)
        .map(ILoggingEvent::getFormattedMessage)
        .toList();
  }

  @Test
  void aNameDefinedTwiceIsLoggedOnceAcrossRescans() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), configuration("same"));
    Files.writeString(dir.resolve("b.yaml"), configuration("same"));
    ConfigurationFiles files = new ConfigurationFiles(dir, scheduler, applied::add);

    files.reload();
    files.reload();
    files.reload();

    assertThat(errors())
        .containsExactly(
            dir.resolve("b.yaml")
                + ": configuration same is already defined in "
                + dir.resolve("a.yaml")
                + "; ignored");
    assertThat(applied).hasSize(3).allSatisfy(specs -> assertThat(specs).hasSize(1));

    // Fixed, then broken again: logged again.
    Files.writeString(dir.resolve("b.yaml"), configuration("other"));
    files.reload();
    Files.writeString(dir.resolve("b.yaml"), configuration("same"));
    files.reload();
    assertThat(errors()).hasSize(2);
  }

  @Test
  void anUnreadableFileIsLoggedOnceUntilItChanges() throws Exception {
    Path bad = dir.resolve("bad.yaml");
    Files.write(bad, new byte[] {'a', ':', ' ', (byte) 0xff, (byte) 0xfe, '\n'});
    ConfigurationFiles files = new ConfigurationFiles(dir, scheduler, applied::add);

    files.reload();
    files.reload();
    files.reload();

    assertThat(errors()).hasSize(1).allMatch(e -> e.startsWith(bad + ": cannot be read"));

    Files.writeString(bad, configuration("fixed"));
    files.reload();
    assertThat(applied.get(applied.size() - 1))
        .extracting(ConfigurationSpec::name)
        .containsExactly("fixed");
    assertThat(errors()).hasSize(1);
  }
}
