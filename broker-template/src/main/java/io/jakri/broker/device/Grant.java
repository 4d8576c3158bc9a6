package io.jakri.broker.device;

import java.util.List;

/**
 * What a container received through one resource: either one Instance ({@code akri.sh/<instance>})
 * or n devices of a class resource ({@code akri.sh/<configuration>}, {@code example.com/widget}).
 */
public sealed interface Grant permits InstanceGrant, ClassGrant {

  /** The devices of this grant, device i at index i (one for an Instance). */
  List<Device> devices();
}
