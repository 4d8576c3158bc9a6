package io.jakri.agent;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.util.ServiceLoader;

/**
 * A kubelet served inside the agent's process on its kubelet socket ({@code --emulate-kubelet}), on
 * the agent's own event loop group. The agent's core does not know which one: the binary provides
 * its {@link Factory} as a service (the kubelet emulator), so a tool never becomes part of what the
 * agent runs.
 */
public interface KubeletStandIn extends AutoCloseable {

  /** Starts serving before the agent's device plugins register; throws when it cannot. */
  void start() throws IOException;

  /** Stops serving; idempotent. */
  @Override
  void close();

  /** Makes the stand-in for an agent's options; found with {@link ServiceLoader}. */
  interface Factory {
    KubeletStandIn create(AgentOptions options, EventLoopGroup group);
  }

  /** The stand-in the class path provides, for {@code options}. */
  static KubeletStandIn forOptions(AgentOptions options, EventLoopGroup group) {
    Factory factory =
        ServiceLoader.load(Factory.class, KubeletStandIn.class.getClassLoader())
            .findFirst()
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "--emulate-kubelet: no kubelet emulator on the class path (it comes"
                            + " with the jakri-agent jar)"));
    return factory.create(options, group);
  }
}
