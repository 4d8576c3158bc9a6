package io.jakri.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.batch.v1.JobSpec;

/** {@code spec.brokerSpec}: what runs next to each Instance; exactly one of the two. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class BrokerSpec {

  private PodSpec brokerPodSpec;

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
