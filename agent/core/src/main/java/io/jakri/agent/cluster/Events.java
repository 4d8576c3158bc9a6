package io.jakri.agent.cluster;

/**
 * Where agent code reports what happened to a resource, for {@code kubectl describe} and {@code
 * kubectl get events} to show.
 *
 * <p>Implementations never throw and never block for long: reporting is best effort and must not
 * disturb the code that reports. Safe to call from any thread.
 *
 * @see EventRecorder
 */
public interface Events {

  /**
   * Reports a normal occurrence.
   *
   * @param reason short CamelCase cause, e.g. {@code InstanceCreated}
   * @param message a sentence for humans
   */
  void normal(ObjectRef ref, String reason, String message);

  /**
   * Reports something an operator should look at.
   *
   * @param reason short CamelCase cause, e.g. {@code PropertyUnresolvable}
   * @param message a sentence for humans
   */
  void warning(ObjectRef ref, String reason, String message);

  /**
   * Logs each occurrence (normal ones at INFO, warnings at WARN) instead of recording it: for
   * standalone mode, where there is no API server.
   */
  static Events logging(org.slf4j.Logger log) {
    return new Events() {
      @Override
      public void normal(ObjectRef ref, String reason, String message) {
        log.info("{} {}: {}", ref, reason, message);
      }

      @Override
      public void warning(ObjectRef ref, String reason, String message) {
        log.warn("{} {}: {}", ref, reason, message);
      }
    };
  }

  /** Records nothing: for standalone mode, where there is no API server. */
  static Events discard() {
    return new Events() {
      @Override
      public void normal(ObjectRef ref, String reason, String message) {}

      @Override
      public void warning(ObjectRef ref, String reason, String message) {}
    };
  }
}
