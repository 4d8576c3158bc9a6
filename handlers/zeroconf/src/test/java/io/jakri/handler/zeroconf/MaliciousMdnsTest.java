package io.jakri.handler.zeroconf;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.DiscoveredDevice;
import java.io.ByteArrayOutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.regex.Pattern;
import javax.jmdns.ServiceInfo;
import org.junit.jupiter.api.Test;

/**
 * Malicious mDNS answers, offline (JmDNS {@link ServiceInfo}s built in memory, raw TXT bytes): TXT
 * keys aiming at {@code LD_PRELOAD}, {@code PATH}, names with {@code =} or NUL, 64 KiB TXT records,
 * seeded random TXT data, 10,000 services. No property escapes the {@code AKRI_ZEROCONF_DEVICE_}
 * namespace, values stay bounded and clean, and memory stays bounded.
 */
class MaliciousMdnsTest {

  private static final Pattern ENV = Pattern.compile("AKRI_ZEROCONF(_DEVICE_[A-Z0-9_]+)?");
  private static final int FUZZ_CASES = Integer.getInteger("jakri.fuzz.cases", 4000);

  @Test
  void craftedTxtKeysNeverLeaveTheNamespace() {
    List<byte[]> strings = new ArrayList<>();
    for (String s :
        List.of(
            "LD_PRELOAD=/tmp/evil.so",
            "ld_library_path=/tmp",
            "PATH=/tmp/bin",
            "=PATH=/tmp",
            "JAVA_TOOL_OPTIONS=-javaagent:/tmp/x.jar",
            "A=B=C",
            "KEY\u0000LD_PRELOAD=/evil.so",
            "ＰＡＴＨ=fullwidth",
            "\u0130nj=dotted",
            "../../etc=passwd",
            "$(reboot)=1",
            "BASH_FUNC_x%%=() { :; }",
            "AKRI_ZEROCONF=hijack",
            "KIND=hijack",
            "k=line1\nline2",
            "k2=\u001b[31mred",
            "boolean")) {
      strings.add(s.getBytes(StandardCharsets.UTF_8));
    }
    ServiceInfo info = ServiceInfo.create("_http._tcp.local.", "evil", 80, 0, 0, txt(strings));
    Map<String, String> props =
        ZeroconfProperties.of(JmdnsBrowser.toRecord(info, Services.HTTP, "local"));
    assertClean(props);
    assertThat(props)
        .doesNotContainKeys("LD_PRELOAD", "PATH", "JAVA_TOOL_OPTIONS", "LD_LIBRARY_PATH")
        .containsEntry("AKRI_ZEROCONF", "zeroconf")
        .containsEntry(ZeroconfProperties.KIND, "_http._tcp")
        .containsEntry("AKRI_ZEROCONF_DEVICE_LD_PRELOAD", "/tmp/evil.so")
        .containsEntry("AKRI_ZEROCONF_DEVICE_A", "B=C")
        .doesNotContainKey("AKRI_ZEROCONF_DEVICE_K")
        .doesNotContainKey("AKRI_ZEROCONF_DEVICE_K2");
    System.out.println("FAULT mdns-crafted-keys cases=17 recovered=17 lost=0");
  }

  @Test
  void seededRandomTxtDataGivesOnlyCleanBoundedProperties() {
    SplittableRandom random = new SplittableRandom(6763);
    int escaped = 0;
    for (int i = 0; i < FUZZ_CASES; i++) {
      byte[] data = new byte[random.nextInt(i % 50 == 0 ? 65_536 : 1_024)];
      random.nextBytes(data);
      if (random.nextBoolean()) {
        // Well-formed length prefixes around random content, so decoding goes deep.
        data = txt(randomStrings(random, data.length));
      }
      ServiceInfo info = ServiceInfo.create("_http._tcp.local.", "s" + i, 80, 0, 0, data);
      Map<String, String> props =
          ZeroconfProperties.of(JmdnsBrowser.toRecord(info, Services.HTTP, "local"));
      try {
        assertClean(props);
      } catch (AssertionError e) {
        escaped++;
      }
    }
    System.out.printf(
        "FAULT mdns-random-txt cases=%d recovered=%d lost=%d%n",
        FUZZ_CASES, FUZZ_CASES - escaped, escaped);
    assertThat(escaped).isZero();
  }

  @Test
  void tenThousandServicesWith64KiBTxtStayWithinTheTableAndMemoryBounds() {
    ServiceTable table = new ServiceTable(ZeroconfDiscovery.MAX_SERVICES);
    // The worst TXT for memory: 64 KiB of distinct two-byte keys (about 21,800 attributes).
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0, bytes = 0; bytes < 65_000; i++) {
      byte[] k = Integer.toString(i, 36).getBytes(StandardCharsets.US_ASCII);
      keys.add(k);
      bytes += k.length + 1;
    }
    byte[] hugeTxt = txt(keys);
    long before = usedHeap();
    long start = System.nanoTime();
    int full = 0;
    for (int i = 0; i < 10_000; i++) {
      ServiceInfo info =
          ServiceInfo.create("_http._tcp.local.", "svc-" + i, 80, 0, 0, hugeTxt.clone());
      if (table.put("eth0", JmdnsBrowser.toRecord(info, Services.HTTP, "local"))
          == ServiceTable.Change.FULL) {
        full++;
      }
    }
    List<DiscoveredDevice> snapshot =
        table.snapshot(
            new ServiceFilter(java.util.Optional.empty(), java.util.Optional.empty(), Map.of()));
    long took = (System.nanoTime() - start) / 1_000_000;
    long grown = usedHeap() - before;
    System.out.printf(
        "MDNS-FLOOD 10000 services with %d-byte TXT: %d kept, %d refused, %d ms, heap grew %d MiB%n",
        hugeTxt.length, table.size(), full, took, grown >> 20);
    assertThat(table.size()).isEqualTo(ZeroconfDiscovery.MAX_SERVICES);
    assertThat(full).isEqualTo(10_000 - ZeroconfDiscovery.MAX_SERVICES);
    assertThat(snapshot).hasSize(ZeroconfDiscovery.MAX_SERVICES);
    snapshot.forEach(d -> assertClean(d.properties()));
    assertThat(grown).as("retained heap").isLessThan(256L * 1024 * 1024);
    assertThat(table.merged())
        .allSatisfy(r -> assertThat(r.txt()).hasSizeLessThanOrEqualTo(TxtEntry.MAX_ATTRIBUTES));
    System.out.println("FAULT mdns-10000-services cases=10000 recovered=10000 lost=0");
  }

  private static void assertClean(Map<String, String> props) {
    assertThat(props.size()).isLessThanOrEqualTo(6 + ZeroconfProperties.MAX_TXT_ENTRIES);
    for (Map.Entry<String, String> e : props.entrySet()) {
      assertThat(e.getKey()).matches(ENV);
      assertThat(e.getValue().getBytes(StandardCharsets.UTF_8).length)
          .isLessThanOrEqualTo(Math.max(ZeroconfProperties.MAX_VALUE_BYTES, 4096));
      assertThat(e.getValue().chars().filter(c -> c != '\t' && Character.isISOControl(c)))
          .isEmpty();
    }
  }

  private static List<byte[]> randomStrings(SplittableRandom random, int budget) {
    List<byte[]> strings = new ArrayList<>();
    int used = 0;
    String[] keys = {"LD_PRELOAD", "PATH", "path", "a=b", "x", "", "=", "K\u0000", "é"};
    while (used < budget) {
      byte[] s;
      if (random.nextInt(3) == 0) {
        String k = keys[random.nextInt(keys.length)];
        s = (k + "=" + "v".repeat(random.nextInt(300))).getBytes(StandardCharsets.UTF_8);
      } else {
        s = new byte[random.nextInt(256)];
        random.nextBytes(s);
      }
      if (s.length > 255) {
        s = java.util.Arrays.copyOf(s, 255);
      }
      strings.add(s);
      used += s.length + 1;
    }
    return strings;
  }

  /** DNS-SD TXT wire format: each string prefixed by its length (at most 255). */
  private static byte[] txt(List<byte[]> strings) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] s : strings) {
      out.write(s.length);
      out.write(s, 0, s.length);
    }
    return out.toByteArray();
  }

  private static long usedHeap() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
