package io.jakri.crd;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
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
 * {@code instances.akri.sh/v0}: one discovered device, the nodes that see it and who holds each of
 * its slots. Field-compatible with Akri's Instance; owned by its Configuration.
 */
@Group(Configuration.GROUP)
@Version(Configuration.VERSION)
@Kind("Instance")
@Plural("instances")
@Singular("instance")
@ShortNames("akrii")
@Categories("all")
@ValidationRule(
    value = "self.metadata.name.size() <= " + Instance.MAX_NAME_LENGTH,
    message =
        "an Instance name is at most 63 characters, so that akri.sh/<name> is a valid"
            + " extended-resource name")
@AdditionalPrinterColumn(
    name = "Config",
    jsonPath = ".spec.configurationName",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Shared",
    jsonPath = ".spec.shared",
    type = AdditionalPrinterColumn.Type.BOOLEAN)
@AdditionalPrinterColumn(
    name = "Nodes",
    jsonPath = ".spec.nodes",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Age",
    jsonPath = ".metadata.creationTimestamp",
    type = AdditionalPrinterColumn.Type.DATE)
public class Instance extends CustomResource<InstanceSpec, Void> implements Namespaced {

  private static final long serialVersionUID = 1L;

  /** Longest Instance name: {@code akri.sh/<name>} must be a valid extended-resource name. */
  public static final int MAX_NAME_LENGTH = 63;
}
