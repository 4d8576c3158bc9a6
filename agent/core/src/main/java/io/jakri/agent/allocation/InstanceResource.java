package io.jakri.agent.allocation;

import io.jakri.agent.deviceplugin.AllocationException;
import io.jakri.agent.deviceplugin.ResourceBackend;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.model.LocalDevice;
import io.jakri.crd.SlotUsage;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import io.jakri.kubelet.v1beta1.Device;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The resource {@code akri.sh/<instance>}: one device per slot. A slot is Healthy when this node
 * may grant it through this resource (free, or held so by this node's own claim) and the device is
 * online here; otherwise Unhealthy (held by another node, through a class resource, or named for
 * this node by someone else).
 */
final class InstanceResource implements ResourceBackend {

  static final String HEALTHY = "Healthy";
  static final String UNHEALTHY = "Unhealthy";

  private final Sources sources;
  private final String instanceName;
  private final String resourceName;

  InstanceResource(Sources sources, String instanceName, String resourceName) {
    this.sources = sources;
    this.instanceName = instanceName;
    this.resourceName = resourceName;
  }

  @Override
  public String resourceName() {
    return resourceName;
  }

  @Override
  public String socketStem() {
    return instanceName;
  }

  @Override
  public List<Device> devices() {
    Optional<Instance> stored = sources.slots().stored(instanceName);
    Optional<LocalDevice> local = sources.devices().get(instanceName);
    if (stored.isEmpty() || local.isEmpty()) {
      return List.of();
    }
    boolean online = local.get().online();
    SlotUsage mine = new SlotUsage.NodeUse(sources.node());
    List<Device> devices = new ArrayList<>(stored.get().capacity());
    for (Map.Entry<String, SlotUsage> slot : stored.get().deviceUsage().entrySet()) {
      SlotUsage usage = slot.getValue();
      boolean healthy =
          online && sources.slots().grantable(instanceName, slot.getKey(), usage, mine);
      devices.add(
          Device.newBuilder()
              .setID(slot.getKey())
              .setHealth(healthy ? HEALTHY : UNHEALTHY)
              .build());
    }
    return devices;
  }

  @Override
  public List<String> preferredAllocation(
      List<String> available, List<String> mustInclude, int size) {
    LinkedHashSet<String> chosen = new LinkedHashSet<>(mustInclude);
    Optional<Instance> stored = sources.slots().stored(instanceName);
    List<String> ordered = SlotClaims.nodeOrder(sources.node(), available);
    // Free slots first, then the ones this node already holds, then anything offered.
    for (boolean wantFree : new boolean[] {true, false}) {
      for (String slot : ordered) {
        if (chosen.size() >= size) {
          break;
        }
        SlotUsage usage =
            stored
                .map(i -> i.deviceUsage().getOrDefault(slot, SlotUsage.Free.INSTANCE))
                .orElse(SlotUsage.Free.INSTANCE);
        if ((usage instanceof SlotUsage.Free) == wantFree) {
          chosen.add(slot);
        }
      }
    }
    return new ArrayList<>(chosen);
  }

  @Override
  public ContainerAllocateResponse allocate(List<String> deviceIds) throws AllocationException {
    LocalDevice local =
        sources
            .devices()
            .get(instanceName)
            .orElseThrow(
                () ->
                    new AllocationException(
                        AllocationException.Reason.UNKNOWN_DEVICE,
                        "instance " + instanceName + " is not discovered on this node"));
    if (!local.online()) {
      throw new AllocationException(
          AllocationException.Reason.UNHEALTHY,
          "instance " + instanceName + " is offline on node " + sources.node());
    }
    if (deviceIds.isEmpty()) {
      throw new AllocationException(
          AllocationException.Reason.INVALID_REQUEST, "no device ids in the request");
    }
    SlotUsage mine = new SlotUsage.NodeUse(sources.node());
    sources.slots().claim(instanceName, deviceIds, slot -> mine);
    ContainerAllocateResponse.Builder response = InstanceContract.of(local);
    sources.addCdiDevices(response, deviceIds);
    return response.build();
  }
}
