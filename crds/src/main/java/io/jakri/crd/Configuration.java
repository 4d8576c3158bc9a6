package io.jakri.crd;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.crd.generator.annotation.SchemaSwap;
import io.fabric8.generator.annotation.ValidationRule;
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
// An instanceObjects entry's other fields are kept by x-kubernetes-preserve-unknown-fields, not
// listed: void removes the any-getter the generator would otherwise render as a property.
@SchemaSwap(
    originalType = InstanceObjectTemplate.class,
    fieldName = "otherFields",
    targetType = void.class)
@ValidationRule(
    value = "self.metadata.name.size() <= " + Configuration.MAX_NAME_LENGTH,
    message =
        "a Configuration name is at most 56 characters, so that akri.sh/<name>-<6 hex digits>"
            + " stays a valid extended-resource name")
// The API server already checks that a name is a DNS-1123 subdomain (lowercase alphanumerics,
// '-' and '.', alphanumeric at both ends); without '.' that is a DNS-1123 label. contains() is
// used rather than matches(): CEL's cost estimate treats metadata.name as unbounded, and a regex
// over an unbounded string can exceed the CRD's validation cost budget.
@ValidationRule(
    value = "!self.metadata.name.contains('.')",
    message = "a Configuration name must be a DNS-1123 label: no '.'")
@AdditionalPrinterColumn(
    name = "Capacity",
    jsonPath = ".spec.capacity",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
    name = "Age",
    jsonPath = ".metadata.creationTimestamp",
    type = AdditionalPrinterColumn.Type.DATE)
public class Configuration extends CustomResource<ConfigurationSpec, ConfigurationStatus>
    implements Namespaced {

  private static final long serialVersionUID = 1L;

  /**
   * Longest Configuration name: Instance names are {@code <configuration>-<6 hex digits>} and must
   * fit the 63 characters of an extended-resource name part, so 63 - 7.
   */
  public static final int MAX_NAME_LENGTH = 56;

  /** The API group of both resources. */
  public static final String GROUP = "akri.sh";

  /** The API version of both resources. */
  public static final String VERSION = "v0";

  /**
   * Configurations as untyped resources, fully described: a client given this needs no API
   * discovery call first (which would fail at once, with a stack trace, while the API server is
   * unreachable, instead of being retried like a watch).
   */
  public static io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext
      resourceDefinition() {
    return new io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext.Builder()
        .withGroup(GROUP)
        .withVersion(VERSION)
        .withKind("Configuration")
        .withPlural("configurations")
        .withNamespaced(true)
        .build();
  }
}
