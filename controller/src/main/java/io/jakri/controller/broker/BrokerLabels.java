package io.jakri.controller.broker;

/**
 * Labels and annotations the controller puts on what it creates. The {@code akri.sh/*}, {@code app}
 * and {@code controller} labels are Akri's, so Akri-era selectors keep working; {@link #MANAGED_BY}
 * marks the objects the controller owns (its informers select on it and it never touches anything
 * without it).
 */
public final class BrokerLabels {

  /** {@value}: set to {@link #CONTROLLER} on every Pod, Job and Service the controller makes. */
  public static final String MANAGED_BY = "app.kubernetes.io/managed-by";

  /** {@value}: the value of {@link #MANAGED_BY}. */
  public static final String CONTROLLER = "jakri-controller";

  /** {@value}: the Configuration's name (Akri's label; also on Instances, set by agents). */
  public static final String CONFIGURATION = "akri.sh/configuration";

  /** {@value}: the Instance's name (Akri's label). */
  public static final String INSTANCE = "akri.sh/instance";

  /** {@value}: the node a broker Pod is pinned to, as a label value (Akri's label). */
  public static final String TARGET_NODE = "akri.sh/target-node";

  /** {@value}: Akri's label with the object's own name (a shortened form if it is too long). */
  public static final String APP = "app";

  /** {@value}: Akri's label saying which controller made the object, set to {@link #AKRI}. */
  public static final String AKRI_CONTROLLER = "controller";

  /** {@value}: the value of {@link #AKRI_CONTROLLER}, as Akri's controller sets it. */
  public static final String AKRI = "akri.sh";

  /** {@value}: annotation with the full node name (a label value may have been shortened). */
  public static final String TARGET_NODE_ANNOTATION = "controller.jakri.io/target-node";

  /** {@value}: annotation with the hash of what the object was made from (rolls on change). */
  public static final String TEMPLATE_HASH = "controller.jakri.io/template-hash";

  private BrokerLabels() {}
}
