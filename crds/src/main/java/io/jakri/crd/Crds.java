package io.jakri.crd;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * Names of the two custom resource definitions and access to their committed YAML ({@code
 * crds/configurations.akri.sh.yaml}, {@code crds/instances.akri.sh.yaml}), which the build bundles
 * into this jar next to this class. The YAML is generated from {@link Configuration} and {@link
 * Instance}; the build fails when the committed copy drifts from the model.
 *
 * <p>Typical use in a test against fabric8's mock API server:
 *
 * <pre>{@code
 * for (CustomResourceDefinition crd : Crds.load()) {
 *   client.apiextensions().v1().customResourceDefinitions().resource(crd).create();
 * }
 * }</pre>
 */
public final class Crds {

  /** The API group of both resources: {@value}. */
  public static final String GROUP = Configuration.GROUP;

  /** The only (served and stored) version of both resources: {@value}. */
  public static final String VERSION = Configuration.VERSION;

  /** {@value}: the name of the Configuration CRD. */
  public static final String CONFIGURATION_CRD_NAME = "configurations." + GROUP;

  /** {@value}: the name of the Instance CRD. */
  public static final String INSTANCE_CRD_NAME = "instances." + GROUP;

  private static final List<String> CRD_NAMES = List.of(CONFIGURATION_CRD_NAME, INSTANCE_CRD_NAME);

  private Crds() {}

  /**
   * The file name of a CRD's committed YAML, in {@code crds/} and (as a classpath resource) in the
   * package of this class: {@code <crdName>.yaml}.
   */
  public static String yamlFileName(String crdName) {
    return crdName + ".yaml";
  }

  /**
   * Reads the bundled CRDs: the Configuration CRD first, then the Instance CRD. Each call parses
   * the YAML again, so callers own (and may modify) the returned objects. Thread-safe.
   *
   * @throws IllegalStateException when a bundled YAML file is missing (a broken build)
   * @throws UncheckedIOException when a bundled file cannot be read or parsed
   */
  public static List<CustomResourceDefinition> load() {
    KubernetesSerialization serialization = new KubernetesSerialization();
    return CRD_NAMES.stream().map(name -> read(serialization, name)).toList();
  }

  private static CustomResourceDefinition read(
      KubernetesSerialization serialization, String crdName) {
    String resource = yamlFileName(crdName);
    try (InputStream in = Crds.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException(
            "classpath resource io/jakri/crd/" + resource + " is missing from jakri-crds");
      }
      CustomResourceDefinition crd = serialization.unmarshal(in, CustomResourceDefinition.class);
      if (!crdName.equals(crd.getMetadata().getName())) {
        throw new IllegalStateException(
            resource + " defines " + crd.getMetadata().getName() + ", expected " + crdName);
      }
      return crd;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + resource, e);
    }
  }
}
