package io.jakri.agent.allocation;

import io.jakri.agent.cdi.CdiSpecs;
import io.jakri.agent.instance.LocalDevices;
import io.jakri.kubelet.v1beta1.CDIDevice;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;

/**
 * What a served resource answers from: the node's local device table and the class members (both
 * read only), the slot claims (its one way to change anything) and the CDI specs on disk, if CDI is
 * on.
 */
record Sources(
    LocalDevices devices, ClassMembers classes, SlotClaims slots, Optional<CdiSpecs> cdi) {

  String node() {
    return slots.node();
  }

  /**
   * Names in {@code response} the CDI device of every slot in {@code slots} whose Instance has its
   * CDI spec on disk (none when CDI is off).
   */
  void addCdiDevices(ContainerAllocateResponse.Builder response, List<String> slotIds) {
    if (cdi.isEmpty()) {
      return;
    }
    for (String slot : new LinkedHashSet<>(slotIds)) {
      cdi.get()
          .qualifiedName(ClassResource.instanceOf(slot), slot)
          .ifPresent(name -> response.addCdiDevices(CDIDevice.newBuilder().setName(name)));
    }
  }
}
