package io.jakri.handler.simulated;

import io.jakri.handler.testkit.DiscoveringPluginJarContract;
import java.util.List;
import java.util.Map;

/** The packaged simulated plugin meets the plugin-jar contract of the testkit. */
class SimulatedPluginIT extends DiscoveringPluginJarContract {

  @Override
  protected String pluginId() {
    return "simulated";
  }

  @Override
  protected String handlerClass() {
    return "io.jakri.handler.simulated.SimulatedHandler";
  }

  @Override
  protected String handlerName() {
    return "simulated";
  }

  @Override
  protected List<String> aliases() {
    return List.of("debugEcho");
  }

  @Override
  protected Map.Entry<String, String> invalidDetails() {
    return Map.entry("count: -1", "count");
  }

  @Override
  protected Sample sample() {
    return new Sample(
        "sim", "node-a", "count: 2", List.of("simple-device-node-a-0", "simple-device-node-a-1"));
  }
}
