package io.jakri.agent.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.Validation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SwitchedOffHandlersTest {

  record Installed(Map<String, DiscoveryHandler> byName, List<Runnable> listeners)
      implements HandlerRegistry {
    @Override
    public Optional<DiscoveryHandler> find(String name) {
      return Optional.ofNullable(byName.get(name));
    }

    @Override
    public Set<String> names() {
      return byName.keySet();
    }

    @Override
    public void addListener(Runnable onChange) {
      listeners.add(onChange);
    }
  }

  @Test
  void aSwitchedOffHandlerIsNeitherFoundNorListedAndTheOthersAre() {
    DiscoveryHandler udev = new Named("udev");
    DiscoveryHandler opcua = new Named("opcua");
    Installed installed = new Installed(Map.of("udev", udev, "opcua", opcua), new ArrayList<>());

    SwitchedOffHandlers handlers = new SwitchedOffHandlers(installed, Set.of("udev", "onvif"));

    assertThat(handlers.find("udev")).isEmpty();
    assertThat(handlers.find("opcua")).contains(opcua);
    assertThat(handlers.names()).containsExactly("opcua");
    Runnable listener = () -> {};
    handlers.addListener(listener);
    assertThat(installed.listeners()).containsExactly(listener);
  }

  record Named(String name) implements DiscoveryHandler {
    @Override
    public Validation validate(DiscoveryContext context) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Discovery start(DiscoveryContext context, DeviceListener listener) {
      throw new UnsupportedOperationException();
    }
  }
}
