package io.jakri.crd;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * {@code configurations.akri.sh/v0}: which discovery handler to run with which details, how many
 * pods may share each discovered device, and what to deploy next to it. Field-compatible with
 * Akri's Configuration; jakri adds {@link ConfigurationStatus}.
 */
@Group(Configuration.GROUP)
@Version(Configuration.VERSION)
@Kind("Configuration")
@Plural("configurations")
@Singular("configuration")
@ShortNames("akric")
@Categories("all")
@AdditionalPrinterColumn(
    name = "Age",
    jsonPath = ".metadata.creationTimestamp",
    type = AdditionalPrinterColumn.Type.DATE)
public class Configuration extends CustomResource<ConfigurationSpec, ConfigurationStatus>
    implements Namespaced {

  private static final long serialVersionUID = 1L;

  /** The API group of both resources. */
  public static final String GROUP = "akri.sh";

  /** The API version of both resources. */
  public static final String VERSION = "v0";
}
