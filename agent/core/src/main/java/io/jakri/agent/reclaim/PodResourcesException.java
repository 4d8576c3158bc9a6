package io.jakri.agent.reclaim;

/**
 * The kubelet's PodResources API could not be asked (socket missing, kubelet down, deadline
 * exceeded, error status). Callers must treat this as "unknown", never as "no devices in use".
 */
public final class PodResourcesException extends Exception {
  private static final long serialVersionUID = 1L;

  public PodResourcesException(String message, Throwable cause) {
    super(message, cause);
  }
}
