package io.jakri.agent.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jakri.kubelet.emulator.Pod;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SamplePodsTest {

  @Test
  void eachClassAsksForOneDeviceOfEveryClassResourceButNotOfInstanceResources() {
    List<Pod> pods =
        SamplePods.eachClass()
            .pods(
                Map.of(
                    "akri.sh/cams", 2L,
                    "akri.sh/cams-8120fe", 1L,
                    "akri.sh/cams-a19705", 1L,
                    "example.com/widget", 1L,
                    "akri.sh/empty", 0L),
                List.of(
                    "akri.sh/cams",
                    "akri.sh/cams-8120fe",
                    "akri.sh/cams-a19705",
                    "example.com/widget",
                    "akri.sh/empty"));
    assertThat(pods)
        .extracting(Pod::name)
        .containsExactly("akri-sh-cams-0", "example-com-widget-1");
  }

  @Test
  void aCapacityOneDeviceOfAHandlersClassGetsOnePodNotOnePerResourceOfferingItsSlot() {
    // The static handler's widget: class example.com/widget and Instance resource
    // akri.sh/widgets-133d9a both offer the one slot widgets-133d9a-0.
    Set<String> slot = Set.of("widgets-133d9a-0");
    List<Pod> pods =
        SamplePods.eachClass()
            .pods(
                Map.of("example.com/widget", 1L, "akri.sh/widgets-133d9a", 1L),
                List.of("akri.sh/widgets-133d9a", "example.com/widget"),
                Map.of("example.com/widget", slot, "akri.sh/widgets-133d9a", slot));

    assertThat(pods).extracting(Pod::name).containsExactly("example-com-widget-0");
    assertThat(pods.get(0).containers().get(0).requests())
        .isEqualTo(Map.of("example.com/widget", 1L));
  }

  @Test
  void anInstanceResourceWithSlotsNoClassOffersIsSampled() {
    List<Pod> pods =
        SamplePods.eachClass()
            .pods(
                Map.of("example.com/widget", 1L, "akri.sh/gadgets-a19705", 1L),
                List.of("akri.sh/gadgets-a19705", "example.com/widget"),
                Map.of(
                    "example.com/widget", Set.of("widgets-133d9a-0"),
                    "akri.sh/gadgets-a19705", Set.of("gadgets-a19705-0")));

    assertThat(pods)
        .extracting(Pod::name)
        .containsExactly("akri-sh-gadgets-a19705-0", "example-com-widget-1");
  }

  @Test
  void anInstanceResourceWhoseClassIsNotServedIsStillSampled() {
    assertThat(
            SamplePods.eachClass()
                .pods(Map.of("akri.sh/other-abcdef", 1L), List.of("akri.sh/other-abcdef")))
        .extracting(Pod::name)
        .containsExactly("akri-sh-other-abcdef-0");
  }

  @Test
  void requestsParseResourceAndCount() {
    assertThat(SamplePods.Request.parse("akri.sh/my-config=3"))
        .isEqualTo(new SamplePods.Request("akri.sh/my-config", 3));
    assertThat(SamplePods.Request.parse("example.com/widget"))
        .isEqualTo(new SamplePods.Request("example.com/widget", 1));
  }

  @Test
  void malformedRequestsSayWhatIsExpected() {
    assertThatThrownBy(() -> SamplePods.Request.parse("widget=1"))
        .hasMessage("--pod \"widget=1\": expected RESOURCE=N, e.g. akri.sh/my-config=1");
    assertThatThrownBy(() -> SamplePods.Request.parse("akri.sh/x=two"))
        .hasMessageContaining("N must be a whole number");
    assertThatThrownBy(() -> SamplePods.Request.parse("akri.sh/x=0"))
        .hasMessage("--pod \"akri.sh/x=0\": N must be 1 to 1000");
  }

  @Test
  void podNamesAreDnsLabels() {
    assertThat(SamplePods.podName("Example.COM/Widget_X", 12)).isEqualTo("example-com-widget-x-12");
    assertThat(SamplePods.podName("akri.sh/" + "a".repeat(80), 1)).hasSizeLessThanOrEqualTo(63);
  }
}
