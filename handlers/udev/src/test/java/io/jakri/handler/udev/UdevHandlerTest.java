package io.jakri.handler.udev;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import io.jakri.handler.testkit.RecordingListener;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class UdevHandlerTest {

  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  private DiscoveryContext context(String details) {
    return new DiscoveryContext("cams", "node-a", details, Map.of(), scheduler);
  }

  @Test
  void validateReportsEveryRuleErrorAndWarnings() {
    Validation v =
        new UdevHandler()
            .validate(
                context(
                    "udevRules:\n- KERNEL==\"a\" KERNEL==\"b\"\n- RUN{program}+=\"x\"\n"
                        + "- KERNEL=\"c\"\n"));
    assertThat(v.errors())
        .hasSize(2)
        .allMatch(e -> e.startsWith("udevRules[1] ") || e.startsWith("udevRules[2] "));
    assertThat(v.warnings())
        .singleElement()
        .asString()
        .contains("not joined to the rule by a comma");
  }

  @Test
  void akrisConfigurationsValidate() {
    for (String details :
        new String[] {
          "udevRules:\n  - KERNEL==\"null\"\npermissions: rwm\n",
          "udevRules:\n-  'KERNEL==\"video[0-9]*\"'\npermissions: rwm\n",
          "groupRecursive: true\nudevRules:\n- ENV{ID_PATH}==\"pci-0000:00:14.0-usb-0:1:1.0\"\n"
              + "permissions: rwm\n",
          "groupRecursive: false\nudevRules:\n- SUBSYSTEM==\"video4linux\", ATTR{index}==\"0\"\n"
              + "permissions: rwm\n"
        }) {
      assertThat(new UdevHandler().validate(context(details)).errors()).as(details).isEmpty();
    }
  }

  @Test
  void startRefusesBadDetailsWithEveryError() {
    assertThatThrownBy(
            () ->
                new UdevHandler()
                    .start(
                        context("udevRules:\n- ACTION==\"add\"\npermissions: x\n"),
                        new RecordingListener()))
        .isInstanceOf(InvalidDetailsException.class)
        .hasMessageContaining("unsupported field ACTION")
        .hasMessageContaining("permissions must be one of");
  }
}
