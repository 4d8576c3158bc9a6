package io.jakri.kubelet.emulator;

import java.util.Optional;

/**
 * A pod was not admitted (or its container could not start). {@link #reason()} is short and stable,
 * modelled on the kubelet's:
 *
 * <ul>
 *   <li>{@value #UNEXPECTED_ADMISSION_ERROR}: a device plugin RPC during allocation failed
 *       (Allocate, GetPreferredAllocation, no container response, endpoint stopped);
 *   <li>{@code Insufficient <resource>}: not enough healthy free devices, or the resource is not
 *       served by any plugin;
 *   <li>{@value #CREATE_CONTAINER_CONFIG_ERROR}: PreStartContainer failed before a container start.
 * </ul>
 *
 * {@link #getMessage()} carries the kubelet-style detail (e.g. {@code Allocate failed due to rpc
 * error: code = Unknown desc = ..., which is unexpected}).
 */
public final class AdmissionException extends Exception {
  private static final long serialVersionUID = 1L;

  public static final String UNEXPECTED_ADMISSION_ERROR = "UnexpectedAdmissionError";
  public static final String CREATE_CONTAINER_CONFIG_ERROR = "CreateContainerConfigError";
  private static final String INSUFFICIENT = "Insufficient ";

  private final String reason;

  AdmissionException(String reason, String message) {
    super(message);
    this.reason = reason;
  }

  static AdmissionException unexpected(String cause) {
    return new AdmissionException(
        UNEXPECTED_ADMISSION_ERROR, "Allocate failed due to " + cause + ", which is unexpected");
  }

  static AdmissionException insufficient(String resource, int requested, int available) {
    return new AdmissionException(
        INSUFFICIENT + resource,
        "requested number of devices unavailable for "
            + resource
            + ". Requested: "
            + requested
            + ", Available: "
            + available);
  }

  static AdmissionException preStartFailed(String cause) {
    return new AdmissionException(
        CREATE_CONTAINER_CONFIG_ERROR,
        "device plugin PreStartContainer rpc failed with err: " + cause);
  }

  /** The short reason, see the class comment. */
  public String reason() {
    return reason;
  }

  /** The resource that was insufficient, if that was the reason. */
  public Optional<String> insufficientResource() {
    return reason.startsWith(INSUFFICIENT)
        ? Optional.of(reason.substring(INSUFFICIENT.length()))
        : Optional.empty();
  }
}
