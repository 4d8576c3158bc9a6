package io.jakri.crd;

import io.fabric8.crd.generator.annotation.PreserveUnknownFields;

/**
 * Schema stand-in for embedded Kubernetes objects (PodSpec, JobSpec, ServiceSpec) whose full
 * OpenAPI schema would make the CRD huge: the CRD generator renders a field annotated with
 * {@code @SchemaFrom(type = OpaqueObjectSchema.class)} as {@code type: object} with {@code
 * x-kubernetes-preserve-unknown-fields: true}, while the Java field keeps its real fabric8 type.
 * Never instantiated.
 */
@PreserveUnknownFields
final class OpaqueObjectSchema {

  private OpaqueObjectSchema() {}
}
