package io.jakri.handler.zeroconf;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.jmdns.ServiceInfo;
import org.junit.jupiter.api.Test;

class JmdnsBrowserTest {

  @Test
  void convertsAServiceInfoBuiltOfflineIntoARecord() {
    Map<String, String> txt = new LinkedHashMap<>();
    txt.put("model", "x1");
    txt.put("LD_PRELOAD", "/evil.so");
    ServiceInfo info = ServiceInfo.create("_http._tcp.local.", "Printer 1", 631, 0, 0, txt);

    ServiceRecord record = JmdnsBrowser.toRecord(info, Services.HTTP, "local");

    assertThat(record.name()).isEqualTo("Printer 1");
    assertThat(record.port()).isEqualTo(631);
    assertThat(record.fullName()).isEqualTo("Printer 1._http._tcp.local");
    assertThat(record.txt())
        .containsExactly(TxtEntry.of("model", "x1"), TxtEntry.of("LD_PRELOAD", "/evil.so"));
    assertThat(record.addresses()).isEmpty();
  }

  /**
   * The agent closes a plugin's class loader once the plugin's threads have ended; JmDNS's own
   * timers outlived {@code JmDNS.close()} (issue 26 item 11: its state timer then loaded {@code
   * Renewer} through the closed loader). On loopback, no network needed.
   */
  @Test
  void closeReturnsOnlyOnceJmdnsTimersHaveEnded() throws Exception {
    String host = "jakri-test-" + UUID.randomUUID().toString().substring(0, 8);
    Browser browser =
        JmdnsBrowser.factory(host, Runnable::run)
            .open(
                InetAddress.getLoopbackAddress(),
                Services.HTTP,
                "local",
                new Browser.Events() {
                  @Override
                  public void resolved(ServiceRecord service) {}

                  @Override
                  public void removed(String instanceName) {}
                });
    assertThat(timerThreads(host)).hasSize(2);

    browser.close();

    assertThat(((JmdnsBrowser) browser).timersEnded())
        .as("both timers ran their last task")
        .isTrue();
    // A timer's thread leaves JDK code only after its last task counted down; join it briefly.
    for (Thread t : timerThreads(host)) {
      t.join(1000);
    }
    assertThat(timerThreads(host)).isEmpty();
  }

  private static List<Thread> timerThreads(String host) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .filter(t -> t.getName().startsWith("JmDNS(" + host) && t.getName().endsWith("Timer"))
        .toList();
  }
}
