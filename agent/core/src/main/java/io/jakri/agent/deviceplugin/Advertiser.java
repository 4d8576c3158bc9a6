package io.jakri.agent.deviceplugin;

/**
 * What the node's resources need of the device-plugin side: resources served to the kubelet,
 * retired, and their devices pushed again. {@link DevicePluginManager} is the implementation; every
 * method may be called from any thread and returns at once.
 */
public interface Advertiser {

  /** Serves {@code backend}'s resource and registers it; a no-op when already served. */
  void serve(ResourceBackend backend);

  /** Stops serving a resource for good. */
  void retire(String resource);

  /** Pushes the resource's current devices to the kubelet if they changed. */
  void refresh(String resource);
}
