package io.jakri.handler.staticmapping;

import io.jakri.handler.testkit.DiscoveringPluginJarContract;
import java.util.List;
import java.util.Map;

/** The packaged static plugin meets the plugin-jar contract of the testkit. */
class StaticPluginIT extends DiscoveringPluginJarContract {

  @Override
  protected String pluginId() {
    return "static";
  }

  @Override
  protected String handlerClass() {
    return "io.jakri.handler.staticmapping.StaticHandler";
  }

  @Override
  protected String handlerName() {
    return "static";
  }

  @Override
  protected Map.Entry<String, String> invalidDetails() {
    return Map.entry("deviceMapping: 7", "deviceMapping");
  }

  @Override
  protected Sample sample() {
    return new Sample(
        "spookd",
        "minikube",
        "deviceMapping: [{hosts: [minikube], devices: [{resourceName: example.com/widget,"
            + " instanceID: \"0001\", env: {IP: 192.168.0.200}}]}]",
        List.of("example.com/widget/0001"));
  }
}
