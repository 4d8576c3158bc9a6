package io.jakri.kubelet.emulator;

/** A device node a device plugin asked for in its {@code ContainerAllocateResponse.devices}. */
public record DeviceSpecInfo(String containerPath, String hostPath, String permissions) {}
