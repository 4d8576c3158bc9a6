package io.jakri.agent.dra;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DraNamesTest {

  @Test
  void aSlotIdThatIsADnsLabelIsTheDeviceName() {
    assertThat(DraNames.device("akri-debug-echo-foo-8120fe-0"))
        .isEqualTo("akri-debug-echo-foo-8120fe-0");
  }

  @Test
  void otherSlotIdsBecomeDnsLabelsWithAHash() {
    String dotted = DraNames.device("cams.floor2-8120fe-1");
    assertThat(DraNames.isDnsLabel(dotted)).isTrue();
    assertThat(dotted).matches("cams-floor2-8120fe-1-[0-9a-f]{8}");
    String longId = "a".repeat(60) + "-8120fe-12";
    String cut = DraNames.device(longId);
    assertThat(cut).hasSizeLessThanOrEqualTo(63);
    assertThat(DraNames.isDnsLabel(cut)).isTrue();
    // Distinct slots stay distinct after the cut.
    assertThat(DraNames.device("a".repeat(60) + "-8120fe-13")).isNotEqualTo(cut);
  }

  @Test
  void poolSliceAndClassNames() {
    assertThat(DraNames.pool("node-1", "cams")).isEqualTo("node-1-cams");
    assertThat(DraNames.slice("node-1-cams", 3)).isEqualTo("node-1-cams-akri.sh-3");
    assertThat(DraNames.deviceClass("cams")).isEqualTo("cams.akri.sh");
    String longPool = DraNames.pool("n".repeat(200), "c".repeat(100));
    assertThat(longPool).hasSizeLessThanOrEqualTo(253);
    assertThat(DraNames.slice(longPool, 77)).hasSizeLessThanOrEqualTo(253).endsWith("-akri.sh-77");
  }

  @Test
  void aConfigurationsSharedPoolIsNamedAfterItAloneAndFits() {
    assertThat(DraNames.sharedPool("cams")).isEqualTo("cams-shared");
    assertThat(DraNames.slice(DraNames.sharedPool("cams"), 0)).isEqualTo("cams-shared-akri.sh-0");
    String longShared = DraNames.sharedPool("c".repeat(250));
    assertThat(longShared).hasSizeLessThanOrEqualTo(253);
    assertThat(longShared).isNotEqualTo(DraNames.sharedPool("c".repeat(251)));
  }
}
