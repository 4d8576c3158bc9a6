package io.jakri.agent.reclaim;

import java.util.Optional;
import java.util.Set;

/** A PodResources API whose answer (or failure) a test sets. */
final class FakePodResources implements PodResourcesClient {
  private volatile Set<DeviceInUse> inUse = Set.of();
  private volatile Optional<String> failure = Optional.empty();

  void answer(DeviceInUse... devices) {
    inUse = Set.of(devices);
    failure = Optional.empty();
  }

  void fail(String why) {
    failure = Optional.of(why);
  }

  @Override
  public Set<DeviceInUse> devicesInUse() throws PodResourcesException {
    if (failure.isPresent()) {
      throw new PodResourcesException(failure.get(), null);
    }
    return inUse;
  }

  @Override
  public void close() {}
}
