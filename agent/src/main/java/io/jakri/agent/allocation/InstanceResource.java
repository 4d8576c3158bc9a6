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

  private final NodeResources node;
  private final String instanceName;
  private final String resourceName;

  InstanceResource(NodeResources node, String instanceName, String resourceName) {
    this.node = node;
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
    Optional<Instance> stored = node.stored(instanceName);
    Optional<LocalDevice> local = node.local(instanceName);
    if (stored.isEmpty() || local.isEmpty()) {
      return List.of();
    }
    boolean online = local.get().online();
    SlotUsage mine = new SlotUsage.NodeUse(node.node());
    List<Device> devices = new ArrayList<>(stored.get().capacity());
    for (Map.Entry<String, SlotUsage> slot : stored.get().deviceUsage().entrySet()) {
      SlotUsage usage = slot.getValue();
      boolean healthy = online && node.grantable(instanceName, slot.getKey(), usage, mine);
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
    Optional<Instance> stored = node.stored(instanceName);
    List<String> ordered = NodeResources.nodeOrder(node.node(), available);
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
        node.local(instanceName)
            .orElseThrow(
                () ->
                    new AllocationException(
                        AllocationException.Reason.UNKNOWN_DEVICE,
                        "instance " + instanceName + " is not discovered on this node"));
    if (!local.online()) {
      throw new AllocationException(
          AllocationException.Reason.UNHEALTHY,
          "instance " + instanceName + " is offline on node " + node.node());
    }
    if (deviceIds.isEmpty()) {
      throw new AllocationException(
          AllocationException.Reason.INVALID_REQUEST, "no device ids in the request");
    }
    SlotUsage mine = new SlotUsage.NodeUse(node.node());
    node.claim(instanceName, deviceIds, slot -> mine);
    ContainerAllocateResponse.Builder response = InstanceContract.of(local);
    node.addCdiDevices(response, deviceIds);
    return response.build();
  }
}
