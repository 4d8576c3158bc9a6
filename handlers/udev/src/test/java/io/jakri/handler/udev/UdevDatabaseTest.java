package io.jakri.handler.udev;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UdevDatabaseTest {

  @TempDir Path dir;

  @Test
  void readsPropertiesTagsAndLinks() throws Exception {
    Files.writeString(
        dir.resolve("c81:0"),
        """
        S:v4l/by-id/usb-Cam-video-index0
        S:v4l/by-path/pci-0000:00:14.0-usb-0:1:1.0-video-index0
        I:1234
        E:ID_SERIAL=Cam_123
        E:ID_V4L_CAPABILITIES=:capture:
        E:EMPTY=
        G:uaccess
        G:seat
        Q:uaccess
        V:1
        garbage line
        """);
    UdevDatabase db = new UdevDatabase(dir);
    UdevDatabase.Entry e = db.lookup("c81:0").orElseThrow();
    assertThat(e.properties())
        .containsEntry("ID_SERIAL", "Cam_123")
        .containsEntry("ID_V4L_CAPABILITIES", ":capture:")
        .containsEntry("EMPTY", "")
        .hasSize(3);
    assertThat(e.tags()).containsExactly("uaccess", "seat");
    assertThat(e.currentTags()).containsExactly("uaccess");
    assertThat(e.links()).hasSize(2).first().isEqualTo("v4l/by-id/usb-Cam-video-index0");
    assertThat(db.lookup("c81:1")).isEmpty();
    assertThat(db.lookup("../etc")).isEmpty();
  }

  @Test
  void namesFilesAsUdevd() {
    assertThat(
            UdevDatabase.fileName(
                "block", "zram1", Optional.of("252"), Optional.of("1"), Optional.empty()))
        .isEqualTo("b252:1");
    assertThat(
            UdevDatabase.fileName(
                "mem", "null", Optional.of("1"), Optional.of("3"), Optional.empty()))
        .isEqualTo("c1:3");
    assertThat(
            UdevDatabase.fileName(
                "net", "eth0", Optional.empty(), Optional.empty(), Optional.of("2")))
        .isEqualTo("n2");
    assertThat(
            UdevDatabase.fileName(
                "pci", "0000:00:02.0", Optional.empty(), Optional.empty(), Optional.empty()))
        .isEqualTo("+pci:0000:00:02.0");
  }
}
