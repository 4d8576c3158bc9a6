package io.jakri.handler.zeroconf;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
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
}
