/**
 * Slot reclamation: the kubelet never tells a device plugin that a pod ended, so {@link
 * io.jakri.agent.reclaim.SlotReclaimer} asks the kubelet's PodResources API ({@link
 * io.jakri.agent.reclaim.PodResourcesClient}, over gRPC in {@link
 * io.jakri.agent.reclaim.GrpcPodResourcesClient}) which devices containers hold, and frees slots
 * this node holds that no container has used for a grace period.
 */
package io.jakri.agent.reclaim;
