package io.jakri.agent;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.jakri.kubelet.emulator.KubeletEmulator;
import java.io.IOException;
import java.util.Optional;

/**
 * The kubelet emulator as the agent's {@link KubeletStandIn} ({@code --emulate-kubelet}, {@code
 * demo}): served on the agent's event loop group, on the device-plugin directory's {@code
 * kubelet.sock} and the options' PodResources socket. Provided to the core as a service.
 */
public final class EmulatedKubelet implements KubeletStandIn {

  private final KubeletEmulator emulator;

  private EmulatedKubelet(KubeletEmulator emulator) {
    this.emulator = emulator;
  }

  /** The emulator an agent serves, when it serves one. */
  public static Optional<KubeletEmulator> of(Agent agent) {
    return agent
        .kubeletStandIn()
        .filter(EmulatedKubelet.class::isInstance)
        .map(s -> ((EmulatedKubelet) s).emulator);
  }

  @Override
  public void start() throws IOException {
    emulator.start();
  }

  @Override
  public void close() {
    emulator.close();
  }

  /** The service the core finds; public with a public constructor for {@code ServiceLoader}. */
  public static final class Factory implements KubeletStandIn.Factory {
    @Override
    public KubeletStandIn create(AgentOptions options, EventLoopGroup group) {
      return new EmulatedKubelet(
          KubeletEmulator.builder(options.devicePluginDir())
              .podResourcesSocket(options.podResourcesSocket())
              .eventLoopGroup(group)
              .build());
    }
  }
}
