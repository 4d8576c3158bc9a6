package io.jakri.agent.cdi;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.jakri.agent.LogCapture;
import io.jakri.agent.allocation.InstanceContract;
import io.jakri.agent.model.LocalDevice;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CdiSpecsTest {

  @TempDir Path tmp;

  private static LocalDevice device(String instance, Map<String, String> properties) {
    return CdiSpecTest.device("cam", instance, 2, properties, Map.of(), List.of(), List.of());
  }

  private static void serve(CdiSpecs specs, LocalDevice d) {
    specs.serve(
        d.instanceName(),
        d.configuration().name(),
        d.configuration().capacity(),
        InstanceContract.of(d));
  }

  private List<String> files(Path dir) throws IOException {
    try (Stream<Path> list = Files.list(dir)) {
      return list.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void oneValidSpecPerInstanceAppearsAndGoesWithIt() throws IOException {
    Path dir = tmp.resolve("cdi");
    CdiSpecs specs = new CdiSpecs(dir);
    specs.start();

    serve(specs, device("cam-a1b2c3", Map.of("A", "1")));
    serve(specs, device("cam-d4e5f6", Map.of("A", "2")));

    assertThat(files(dir)).containsExactly("akri.sh-cam-a1b2c3.json", "akri.sh-cam-d4e5f6.json");
    assertThat(CdiSchema.problems(Files.readAllBytes(dir.resolve("akri.sh-cam-a1b2c3.json"))))
        .isEmpty();
    // Values may come from brokerProperties: owner-only, as the CDI library writes specs.
    assertThat(
            java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(dir.resolve("akri.sh-cam-a1b2c3.json"))))
        .isEqualTo("rw-------");
    assertThat(specs.qualifiedName("cam-a1b2c3", "cam-a1b2c3-1"))
        .contains("akri.sh/cam=cam-a1b2c3-1");

    specs.retire("cam-a1b2c3");
    specs.retire("cam-a1b2c3");

    assertThat(files(dir)).containsExactly("akri.sh-cam-d4e5f6.json");
    assertThat(specs.qualifiedName("cam-a1b2c3", "cam-a1b2c3-1")).isEmpty();
    assertThat(specs.instances()).containsExactly("cam-d4e5f6");
  }

  @Test
  void aSpecIsRewrittenWhenItsContentChangesAndOnlyThen() throws IOException {
    CdiSpecs specs = new CdiSpecs(tmp);
    specs.start();
    Path file = tmp.resolve("akri.sh-cam-a1b2c3.json");

    serve(specs, device("cam-a1b2c3", Map.of("A", "1")));
    Object first = Files.readAttributes(file, "unix:ino").get("ino");
    serve(specs, device("cam-a1b2c3", Map.of("A", "1")));
    serve(specs, device("cam-a1b2c3", Map.of("A", "1")).withOnline(false));

    // Unchanged content: the very same file (an atomic rewrite would be a new inode).
    assertThat(Files.readAttributes(file, "unix:ino").get("ino")).isEqualTo(first);

    serve(specs, device("cam-a1b2c3", Map.of("A", "2")));

    assertThat(Files.readAttributes(file, "unix:ino").get("ino")).isNotEqualTo(first);
    assertThat(Files.readString(file)).contains("\"A=2\"").doesNotContain("\"A=1\"");
    assertThat(files(tmp)).containsExactly("akri.sh-cam-a1b2c3.json");
  }

  @Test
  void readersNeverSeeAPartialSpecWhileItIsRewritten() throws Exception {
    CdiSpecs specs = new CdiSpecs(tmp);
    specs.start();
    Path file = tmp.resolve("akri.sh-cam-a1b2c3.json");
    // Large enough that a write takes many system calls: a non-atomic rewrite would be seen half
    // done.
    String big = "v".repeat(2000);
    Map<String, String> many = new java.util.TreeMap<>();
    for (int i = 0; i < 40; i++) {
      many.put("P" + i, big);
    }
    serve(specs, device("cam-a1b2c3", many));
    ObjectMapper json = new ObjectMapper();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger reads = new AtomicInteger();
    AtomicReference<String> broken = new AtomicReference<>();
    Thread reader =
        new Thread(
            () -> {
              while (!stop.get()) {
                try {
                  byte[] bytes = Files.readAllBytes(file);
                  // An empty file parses as a missing node: check it is the whole spec.
                  if (json.readTree(bytes).path("devices").size() != 2) {
                    broken.compareAndSet(null, "a spec of " + bytes.length + " bytes");
                  }
                  reads.incrementAndGet();
                } catch (NoSuchFileException e) {
                  broken.compareAndSet(null, "the spec was missing while being rewritten");
                } catch (IOException e) {
                  broken.compareAndSet(null, "partial JSON: " + e.getMessage());
                }
              }
            },
            "cdi-reader");
    reader.start();
    try {
      for (int round = 0; round < 200 || reads.get() < 50; round++) {
        Map<String, String> next = new java.util.TreeMap<>(many);
        next.put("ROUND", Integer.toString(round));
        serve(specs, device("cam-a1b2c3", next));
        if (round > 20_000) {
          break;
        }
      }
    } finally {
      stop.set(true);
      reader.join();
    }
    assertThat(broken.get()).isNull();
    assertThat(reads.get()).isGreaterThanOrEqualTo(50);
    assertThat(files(tmp)).containsExactly("akri.sh-cam-a1b2c3.json");
  }

  @Test
  void startRemovesOnlyStaleFilesOfOurs() throws IOException {
    Files.writeString(tmp.resolve("akri.sh-cam-old111.json"), "{}");
    Files.writeString(tmp.resolve(".akri.sh-cam-old222.json.tmp"), "{\"cdiVer");
    Files.writeString(tmp.resolve("nvidia.com-gpu.json"), "{}");
    Files.writeString(tmp.resolve("akri.sh-notes.yaml"), "x");
    Files.writeString(tmp.resolve("vendor-akri.sh-cam.json"), "{}");
    Files.createDirectory(tmp.resolve("akri.sh-dir.json"));
    CdiSpecs specs = new CdiSpecs(tmp);

    try (LogCapture log = LogCapture.of(CdiSpecs.class)) {
      specs.start();
      assertThat(log.messages()).anySatisfy(m -> assertThat(m).contains("removed 2"));
    }

    assertThat(files(tmp))
        .containsExactly(
            "akri.sh-dir.json",
            "akri.sh-notes.yaml",
            "nvidia.com-gpu.json",
            "vendor-akri.sh-cam.json");
  }

  @Test
  void closingRemovesEverySpecAndWritesNoneAfter() throws IOException {
    CdiSpecs specs = new CdiSpecs(tmp);
    specs.start();
    serve(specs, device("cam-a1b2c3", Map.of("A", "1")));
    serve(specs, device("cam-d4e5f6", Map.of("A", "1")));
    Files.writeString(tmp.resolve("nvidia.com-gpu.json"), "{}");

    specs.close();
    serve(specs, device("cam-a1b2c3", Map.of("A", "2")));
    specs.close();

    assertThat(files(tmp)).containsExactly("nvidia.com-gpu.json");
    assertThat(specs.qualifiedName("cam-a1b2c3", "cam-a1b2c3-0")).isEmpty();
  }

  @Test
  void aSpecThatCannotBeRewrittenGoesAndItsSlotsAreNoLongerNamed() throws IOException {
    CdiSpecs specs = new CdiSpecs(tmp);
    specs.start();
    serve(specs, device("cam-a1b2c3", Map.of("A", "1")));
    // Something in the way of the temporary file: the rewrite fails.
    Path blocker = Files.createDirectories(tmp.resolve(".akri.sh-cam-a1b2c3.json.tmp/x"));

    try (LogCapture log = LogCapture.of(CdiSpecs.class)) {
      serve(specs, device("cam-a1b2c3", Map.of("A", "2")));
      assertThat(log.events())
          .singleElement()
          .satisfies(
              e -> {
                assertThat(e.getFormattedMessage())
                    .contains("instance cam-a1b2c3: CDI spec not written");
                assertThat(e.getThrowableProxy()).isNull();
              });
    }
    assertThat(tmp.resolve("akri.sh-cam-a1b2c3.json")).doesNotExist();
    assertThat(specs.qualifiedName("cam-a1b2c3", "cam-a1b2c3-0")).isEmpty();

    Files.delete(blocker);
    serve(specs, device("cam-a1b2c3", Map.of("A", "2")));
    assertThat(specs.qualifiedName("cam-a1b2c3", "cam-a1b2c3-0"))
        .contains("akri.sh/cam=cam-a1b2c3-0");
  }

  @Test
  void anUnusableDirectoryIsOneErrorLineAndNoSpecs() throws IOException {
    Path notADir = tmp.resolve("file");
    Files.writeString(notADir, "x");
    CdiSpecs specs = new CdiSpecs(notADir);

    try (LogCapture log = LogCapture.of(CdiSpecs.class)) {
      specs.start();
      serve(specs, device("cam-a1b2c3", Map.of("A", "1")));
      assertThat(log.events())
          .singleElement()
          .satisfies(
              e -> {
                assertThat(e.getLevel().toString()).isEqualTo("ERROR");
                assertThat(e.getFormattedMessage())
                    .contains(notADir.toString())
                    .contains("without CDI");
                assertThat(e.getThrowableProxy()).isNull();
              });
    }
    assertThat(specs.qualifiedName("cam-a1b2c3", "cam-a1b2c3-0")).isEmpty();
    assertThat(Files.readString(notADir)).isEqualTo("x");
  }

  @Test
  void aConfigurationThatCannotNameAKindIsLoggedOnceAndGetsNoSpecs() throws IOException {
    CdiSpecs specs = new CdiSpecs(tmp);
    specs.start();
    try (LogCapture log = LogCapture.of(CdiSpecs.class)) {
      for (String instance : List.of("1cam-a1b2c3", "1cam-d4e5f6")) {
        LocalDevice d =
            CdiSpecTest.device("1cam", instance, 1, Map.of(), Map.of(), List.of(), List.of());
        serve(specs, d);
      }
      assertThat(log.messages())
          .singleElement()
          .satisfies(
              m -> assertThat(m).contains("configuration 1cam").contains("start with a letter"));
    }
    assertThat(files(tmp)).isEmpty();
    assertThat(specs.qualifiedName("1cam-a1b2c3", "1cam-a1b2c3-0")).isEmpty();
  }
}
