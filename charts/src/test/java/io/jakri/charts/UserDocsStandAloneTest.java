package io.jakri.charts;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The repository's user-facing text (READMEs, docs, examples, chart files) stands alone: it never
 * sends a reader to documents outside the repository (design notes of the build machine) nor to a
 * build machine's absolute checkout path.
 */
class UserDocsStandAloneTest {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  private static final Set<String> SKIPPED_DIRS =
      Set.of(".git", ".ci", "target", "node_modules", ".mvn");

  /** Pointers outside the repository: the design notes' file names and the machine's paths. */
  private static final Pattern OUTSIDE =
      Pattern.compile(
          "\\.\\./shared|/work/|shared docs|DESIGN(\\.md)? ?§|\\bDESIGN\\.md|\\bKUBELET\\.md"
              + "|\\bLIBRARIES\\.md|\\bSTYLE\\.md|\\bseeds/");

  @Test
  void noUserFacingFilePointsOutsideTheRepository() throws IOException {
    List<String> offenders = new ArrayList<>();
    List<Path> files = userFacingFiles();
    for (Path file : files) {
      List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      for (int i = 0; i < lines.size(); i++) {
        if (OUTSIDE.matcher(lines.get(i)).find()) {
          offenders.add(ROOT.relativize(file) + ":" + (i + 1) + ": " + lines.get(i).strip());
        }
      }
    }
    assertThat(files).as("files checked").hasSizeGreaterThan(20);
    assertThat(offenders).isEmpty();
  }

  @Test
  void examplesSayWhichNamespaceTheyGoInAndHowTheStaticOneRunsOnAnyHost() throws IOException {
    String examples = read("examples/README.md");
    assertThat(examples)
        .contains("watch every namespace by default")
        .contains("`watchNamespaces`")
        .contains("kubectl apply -n jakri -f examples/<dir>/");
    assertThat(examples).contains("--node-name minikube");
    assertThat(read("examples/spookd/configuration.yaml")).contains("- minikube");
  }

  @Test
  void zeroconfsNeedForTheHostNetworkIsStatedWhereZeroconfIs() throws IOException {
    for (String doc : List.of("handlers/zeroconf/README.md", "examples/zeroconf/README.md")) {
      assertThat(read(doc)).as(doc).contains("agent.hostNetwork=true");
    }
    assertThat(read("charts/jakri/values.yaml")).contains("hostNetwork: false");
  }

  @Test
  void theImagesReadmeLoadsImagesAsTheReadmeDoes() throws IOException {
    String readme = read("README.md");
    String images = read("images/README.md");
    for (String step :
        List.of("docker-archive:", "kind load image-archive", "ctr -n k8s.io images import")) {
      assertThat(readme).as("README.md").contains(step);
      assertThat(images).as("images/README.md").contains(step);
    }
    // kind and ctr take the docker-archive conversion, never the OCI tarball itself.
    assertThat(images).doesNotContain("kind load image-archive …").doesNotContain("import …`");
  }

  /** The README's demo command: a build that shows its progress, then the demo. */
  static final String DEMO_COMMAND =
      "mvn -B -ntp package -DskipTests -pl agent -am && java -jar agent/target/jakri-agent.jar demo";

  @Test
  void theReadmesSetUpBuildsVisiblyAndSaysHowLongAndWhatAndTestsAsCiDoes() throws IOException {
    String readme = read("README.md");
    int start = readme.indexOf("## Set-up");
    assertThat(start).as("README has a Set-up section").isNotNegative();
    int end = readme.indexOf("\n## ", start + 1);
    String setUp = readme.substring(start, end < 0 ? readme.length() : end);
    List<String> commands =
        setUp.lines().filter(l -> l.startsWith("mvn ")).map(String::strip).toList();

    // One command for the demo, one for the tests; neither hides the build's progress.
    assertThat(commands).containsExactly(DEMO_COMMAND, "mvn -B verify");
    assertThat(readme.lines().filter(l -> l.strip().startsWith("mvn ")))
        .as("README's mvn commands")
        .noneMatch(l -> l.contains(" -q"));
    // How long the first build takes, on what machine, and what it builds.
    assertThat(setUp)
        .containsPattern("about \\d+ minutes")
        .contains("2 cores")
        .contains("agent/target/jakri-agent.jar")
        .contains("container image");
    // CI runs exactly the README's test command.
    List<String> ci =
        Files.readAllLines(ROOT.resolve(".ci/run"), StandardCharsets.UTF_8).stream()
            .map(String::strip)
            .filter(l -> !l.isEmpty() && !l.startsWith("#"))
            .toList();
    assertThat(ci.get(ci.size() - 1)).isEqualTo("mvn -B verify");
  }

  private static String read(String relative) throws IOException {
    return Files.readString(ROOT.resolve(relative), StandardCharsets.UTF_8);
  }

  private static List<Path> userFacingFiles() throws IOException {
    try (Stream<Path> paths = Files.walk(ROOT)) {
      return paths
          .filter(Files::isRegularFile)
          .filter(p -> !inSkippedDir(p))
          .filter(p -> !p.toString().contains("/src/test/"))
          .filter(
              p -> {
                String name = p.getFileName().toString();
                return name.endsWith(".md")
                    || name.endsWith(".txt")
                    || (p.startsWith(ROOT.resolve("examples")) && name.endsWith(".yaml"))
                    || (p.startsWith(ROOT.resolve("charts/jakri")) && !name.endsWith(".tgz"));
              })
          .sorted()
          .toList();
    }
  }

  private static boolean inSkippedDir(Path path) {
    for (Path part : ROOT.relativize(path)) {
      if (SKIPPED_DIRS.contains(part.toString())) {
        return true;
      }
    }
    return false;
  }
}
