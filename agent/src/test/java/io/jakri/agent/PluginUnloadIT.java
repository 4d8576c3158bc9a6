package io.jakri.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import io.jakri.agent.discovery.HandlerLimits;
import io.jakri.agent.testplugins.LingeringThreads;
import io.jakri.handler.DiscoveryHandler;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pf4j.PluginClassLoader;

/**
 * A plugin's class loader is never closed while a thread its handler started still runs (issue 26
 * item 11: JmDNS's timer loading a class through a closed loader). The handler of {@link
 * LingeringThreads} keeps a timer and a worker running after its discovery was closed; unloading
 * its plugin waits for them, or keeps the loader open (counted, logged) when they outlast the
 * handler call timeout.
 */
class PluginUnloadIT {

  private static final String JAR = "lingering.jar";

  @TempDir Path tmp;
  private Agent agent;
  private Path plugins;
  private final List<String> uncaught = new CopyOnWriteArrayList<>();
  private Thread.UncaughtExceptionHandler previousHandler;
  private LogCapture logs;
  private int built;

  @BeforeEach
  void catchUncaught() {
    previousHandler = Thread.getDefaultUncaughtExceptionHandler();
    Thread.setDefaultUncaughtExceptionHandler(
        (thread, error) -> uncaught.add(thread.getName() + ": " + error));
    logs = LogCapture.root();
  }

  @AfterEach
  void stop() {
    if (agent != null) {
      agent.close();
    }
    logs.close();
    Thread.setDefaultUncaughtExceptionHandler(previousHandler);
  }

  private void start(Duration callTimeout, long lingerMs) throws Exception {
    plugins = Files.createDirectories(tmp.resolve("plugins"));
    replaceJar();
    Path config = Files.createDirectories(tmp.resolve("config"));
    Files.writeString(
        config.resolve("lingering.yaml"),
        TestAgent.configuration("lingering", "lingering", 1, "lingerMs: " + lingerMs));
    agent =
        Agent.start(
            new AgentOptions(
                    "node-a",
                    true,
                    Optional.of(config),
                    true,
                    tmp.resolve("dp"),
                    tmp.resolve("pr").resolve("kubelet.sock"),
                    plugins,
                    Duration.ofSeconds(30))
                .withSafeguards(
                    Safeguards.defaults()
                        .withHandlerLimits(
                            new HandlerLimits(
                                callTimeout, HandlerLimits.DEFAULT_STRANDED_THREADS))));
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> !agent.instances().list().isEmpty() && running(currentLoader()));
  }

  /** Writes the plugin jar anew and renames it over the old one: a new file, so a reload. */
  private void replaceJar() throws Exception {
    Path staged = tmp.resolve("staged-" + built++ + ".jar");
    PluginJars.plugin(staged, "lingering", ">=0.1.0", List.of(LingeringThreads.Lingering.class));
    Files.move(
        staged,
        plugins.resolve(JAR),
        StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  private ClassLoader currentLoader() {
    return agent
        .handlers()
        .find("lingering")
        .map(DiscoveryHandler::getClass)
        .map(Class::getClassLoader)
        .orElse(null);
  }

  /** The names of the live threads the plugin loaded by {@code loader} started. */
  private static List<String> threadsOf(ClassLoader loader) {
    String suffix = LingeringThreads.threadSuffix(loader);
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(name -> name.startsWith("lingering-") && name.endsWith(suffix))
        .toList();
  }

  private static boolean running(ClassLoader loader) {
    return loader != null && threadsOf(loader).size() == 2;
  }

  /** Replaces the jar and returns the old loader once the new plugin's handler is installed. */
  private ClassLoader reload() throws Exception {
    ClassLoader old = currentLoader();
    assertThat(old).isNotNull();
    replaceJar();
    await()
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(10))
        .atMost(Duration.ofSeconds(30))
        // One read per poll: with two, the first could see the old handler and the second none
        // (the index is rebuilt without a leaving plugin before it is unloaded), and reload()
        // returned mid-swap with the old loader still waiting for its threads (a CI failure).
        .until(this::currentLoader, now -> now != null && now != old);
    return old;
  }

  private List<String> errorsLogged() {
    return logs.events().stream()
        .filter(
            e ->
                e.getThrowableProxy() != null
                        && e.getThrowableProxy().getClassName().contains("NoClassDefFoundError")
                    || e.getFormattedMessage().contains("NoClassDefFoundError"))
        .map(e -> e.getLoggerName() + ": " + e.getFormattedMessage())
        .toList();
  }

  @Test
  void reloadingAHandlerTwentyTimesWhileItsLibraryThreadsLingerNeverClosesALoaderUnderThem()
      throws Exception {
    start(HandlerLimits.DEFAULT_CALL_TIMEOUT, 300);
    for (int i = 0; i < 20; i++) {
      PluginClassLoader old = (PluginClassLoader) reload();
      // Checked at once: the old plugin was unloaded before the new one was loaded.
      List<String> alive = threadsOf(old);
      assertThat(old.isClosed() ? alive : List.of())
          .as("reload %d: threads of the closed class loader still running", i + 1)
          .isEmpty();
      assertThat(agent.pluginLoadersKeptOpen() > 0 || old.isClosed())
          .as("reload %d: the old class loader is closed or counted as kept open", i + 1)
          .isTrue();
      await()
          .pollDelay(Duration.ZERO)
          .pollInterval(Duration.ofMillis(10))
          .atMost(Duration.ofSeconds(15))
          .until(() -> running(currentLoader()) && !agent.instances().list().isEmpty());
    }
    assertThat(agent.pluginLoadersKeptOpen())
        .as("threads lingering 300 ms end well within the 10 s bound")
        .isZero();
    assertThat(uncaught).isEmpty();
    assertThat(errorsLogged()).isEmpty();
  }

  @Test
  void aLoaderWhoseThreadsOutlastTheCallTimeoutIsKeptOpenCountedLoggedAndClosedWhenTheyEnd()
      throws Exception {
    start(Duration.ofSeconds(1), 6_000);
    PluginClassLoader old = (PluginClassLoader) reload();
    assertThat(old.isClosed()).as("closed under running threads").isFalse();
    assertThat(threadsOf(old)).isNotEmpty();
    assertThat(agent.pluginLoadersKeptOpen()).isEqualTo(1);
    assertThat(agent.metrics().scrape()).contains("jakri_plugin_class_loaders_kept_open 1.0");
    List<String> warnings =
        logs.events().stream()
            .filter(e -> e.getLevel() == Level.WARN)
            .map(e -> e.getFormattedMessage())
            .filter(m -> m.contains("kept open"))
            .toList();
    assertThat(warnings).hasSize(1);
    assertThat(warnings.get(0))
        .contains("lingering-worker" + LingeringThreads.threadSuffix(old))
        .contains("lingering-timer" + LingeringThreads.threadSuffix(old));
    // Once its threads ended, the loader is closed and no longer counted.
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> threadsOf(old).isEmpty() && agent.pluginLoadersKeptOpen() == 0);
    assertThat(old.isClosed()).isTrue();
    assertThat(uncaught).isEmpty();
    assertThat(errorsLogged()).isEmpty();
  }
}
