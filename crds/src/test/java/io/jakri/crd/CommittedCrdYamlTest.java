package io.jakri.crd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The committed {@code crds/*.akri.sh.yaml} files are exactly what the model generates (the drift
 * check). With {@code -Djakri.crds.update=true} the test rewrites them instead, together with the
 * copies already bundled in {@code target/classes}.
 */
class CommittedCrdYamlTest {

  @ParameterizedTest
  @ValueSource(strings = {Crds.CONFIGURATION_CRD_NAME, Crds.INSTANCE_CRD_NAME})
  void committedYamlIsWhatTheModelGenerates(String crdName) throws IOException {
    String expected = CrdFiles.expectedYaml(crdName);
    Path committed = CrdFiles.committed(crdName);
    if (CrdFiles.updateRequested()) {
      Files.writeString(committed, expected);
      Files.createDirectories(CrdFiles.bundledDir());
      Files.writeString(CrdFiles.bundled(crdName), expected);
      System.out.println("jakri: rewrote " + committed.toAbsolutePath().normalize());
    }
    if (!Files.exists(committed)) {
      fail(
          committed.toAbsolutePath().normalize()
              + " is missing; create it with: "
              + CrdFiles.REFRESH_COMMAND);
    }
    Optional<String> difference =
        CrdFiles.firstDifference(CrdFiles.parse(expected), CrdFiles.readCommitted(crdName));
    if (difference.isPresent()) {
      fail(
          "crds/"
              + Crds.yamlFileName(crdName)
              + " is stale: it differs from the YAML generated"
              + " from the model at "
              + difference.get()
              + ". Refresh it with: "
              + CrdFiles.REFRESH_COMMAND
              + " (then run the build again and commit the file)");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {Crds.CONFIGURATION_CRD_NAME, Crds.INSTANCE_CRD_NAME})
  void jarBundlesTheCommittedYaml(String crdName) throws IOException {
    assertThat(CrdFiles.bundled(crdName))
        .as("bundled copy of the committed YAML (rebuild after a refresh)")
        .hasSameTextualContentAs(CrdFiles.committed(crdName));
  }

  @Test
  void crdsDirectoryHoldsNoOtherManifestsForKubectlApply() throws IOException {
    // `kubectl apply -f crds/` reads every .yaml, .yml and .json file at the top level.
    try (Stream<Path> files = Files.list(CrdFiles.committedDir())) {
      List<String> manifests =
          files
              .map(p -> p.getFileName().toString())
              .filter(n -> n.endsWith(".yaml") || n.endsWith(".yml") || n.endsWith(".json"))
              .sorted()
              .toList();
      assertThat(manifests)
          .containsExactly(
              Crds.yamlFileName(Crds.CONFIGURATION_CRD_NAME),
              Crds.yamlFileName(Crds.INSTANCE_CRD_NAME));
    }
  }

  @Test
  void differenceNamesTheFirstChangedPathWithBothValues() {
    ObjectNode generated = CrdFiles.parse("spec:\n  names:\n    shortNames: [akrii]\n");
    ObjectNode committed = CrdFiles.parse("spec:\n  names:\n    shortNames: [akri]\n");

    assertThat(CrdFiles.firstDifference(generated, committed))
        .contains("/spec/names/shortNames/0: generated \"akrii\", committed \"akri\"");
    assertThat(CrdFiles.firstDifference(generated, generated.deepCopy())).isEmpty();
  }
}
