package io.jakri.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.batch.v1.JobSpec;

/**
 * {@code spec.brokerSpec}: what runs next to each Instance; exactly one of the two (a CEL rule in
 * the CRD). In the CRD both are opaque objects ({@code x-kubernetes-preserve-unknown-fields})
 * rather than the full PodSpec/JobSpec schema, which would make the CRD huge; the API server checks
 * the Pod or Job when the controller creates it.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "has(self.brokerPodSpec) != has(self.brokerJobSpec)",
    message = "brokerSpec must set exactly one of brokerPodSpec and brokerJobSpec")
public class BrokerSpec {

  @SchemaFrom(type = OpaqueObjectSchema.class)
  private PodSpec brokerPodSpec;

  @SchemaFrom(type = OpaqueObjectSchema.class)
  private JobSpec brokerJobSpec;

  public PodSpec getBrokerPodSpec() {
    return brokerPodSpec;
  }

  public void setBrokerPodSpec(PodSpec brokerPodSpec) {
    this.brokerPodSpec = brokerPodSpec;
  }

  public JobSpec getBrokerJobSpec() {
    return brokerJobSpec;
  }

  public void setBrokerJobSpec(JobSpec brokerJobSpec) {
    this.brokerJobSpec = brokerJobSpec;
  }
}
