package io.jakri.charts;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The chart ships copies of the repo's CRDs (Helm needs them inside the chart): keep them equal.
 */
class CrdDriftTest {

  private static final Path REPO_CRDS = Path.of("..", "crds");
  private static final Path CHART_CRDS = RenderedChart.CHART.resolve("crds");

  @Test
  void chartCrdsAreByteForByteTheRepositoryCrds() throws IOException {
    List<String> repo = crdFiles(REPO_CRDS);
    assertThat(repo)
        .containsExactlyInAnyOrder("configurations.akri.sh.yaml", "instances.akri.sh.yaml");
    assertThat(crdFiles(CHART_CRDS)).containsExactlyInAnyOrderElementsOf(repo);
    for (String file : repo) {
      assertThat(Files.readString(CHART_CRDS.resolve(file)))
          .as("charts/jakri/crds/%s differs from crds/%s: copy it again", file, file)
          .isEqualTo(Files.readString(REPO_CRDS.resolve(file)));
    }
  }

  private static List<String> crdFiles(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".akri.sh.yaml"))
          .sorted()
          .toList();
    }
  }
}
