package io.jakri.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.ValidationRule;

/** {@code valueFrom}: a key of a Secret or of a ConfigMap (exactly one). */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "has(self.secretKeyRef) != has(self.configMapKeyRef)",
    message = "valueFrom sets exactly one of secretKeyRef and configMapKeyRef")
public class DiscoveryPropertySource {

  private KeyReference secretKeyRef;

  private KeyReference configMapKeyRef;

  public KeyReference getSecretKeyRef() {
    return secretKeyRef;
  }

  public void setSecretKeyRef(KeyReference secretKeyRef) {
    this.secretKeyRef = secretKeyRef;
  }

  public KeyReference getConfigMapKeyRef() {
    return configMapKeyRef;
  }

  public void setConfigMapKeyRef(KeyReference configMapKeyRef) {
    this.configMapKeyRef = configMapKeyRef;
  }
}
