package io.jakri.kubelet.emulator;

/** A mount a device plugin asked for in its {@code ContainerAllocateResponse.mounts}. */
public record MountInfo(String containerPath, String hostPath, boolean readOnly) {}
