package io.jakri.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.kubernetes.api.model.ServiceSpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The spec of a {@link Configuration}. The CRD requires {@code discoveryHandler}, checks {@code
 * capacity >= 1} (default 1) and keeps {@code instanceServiceSpec} and {@code
 * configurationServiceSpec} as opaque objects (see {@link BrokerSpec}).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ConfigurationSpec {

  @Required private DiscoveryHandlerInfo discoveryHandler;

  @Min(1)
  @Default("1")
  private Integer capacity = 1;

  private BrokerSpec brokerSpec;

  @SchemaFrom(type = OpaqueObjectSchema.class)
  private ServiceSpec instanceServiceSpec;

  @SchemaFrom(type = OpaqueObjectSchema.class)
  private ServiceSpec configurationServiceSpec;

  private Map<String, String> brokerProperties = new LinkedHashMap<>();

  private List<InstanceObjectTemplate> instanceObjects;

  public DiscoveryHandlerInfo getDiscoveryHandler() {
    return discoveryHandler;
  }

  public void setDiscoveryHandler(DiscoveryHandlerInfo discoveryHandler) {
    this.discoveryHandler = discoveryHandler;
  }

  public Integer getCapacity() {
    return capacity;
  }

  public void setCapacity(Integer capacity) {
    this.capacity = capacity;
  }

  public BrokerSpec getBrokerSpec() {
    return brokerSpec;
  }

  public void setBrokerSpec(BrokerSpec brokerSpec) {
    this.brokerSpec = brokerSpec;
  }

  public ServiceSpec getInstanceServiceSpec() {
    return instanceServiceSpec;
  }

  public void setInstanceServiceSpec(ServiceSpec instanceServiceSpec) {
    this.instanceServiceSpec = instanceServiceSpec;
  }

  public ServiceSpec getConfigurationServiceSpec() {
    return configurationServiceSpec;
  }

  public void setConfigurationServiceSpec(ServiceSpec configurationServiceSpec) {
    this.configurationServiceSpec = configurationServiceSpec;
  }

  public Map<String, String> getBrokerProperties() {
    return brokerProperties;
  }

  public void setBrokerProperties(Map<String, String> brokerProperties) {
    this.brokerProperties = brokerProperties;
  }

  /**
   * {@code spec.instanceObjects}: manifests the controller renders, creates, updates and deletes
   * per Instance (jakri's; Akri has no such field). Null when absent.
   */
  public List<InstanceObjectTemplate> getInstanceObjects() {
    return instanceObjects;
  }

  public void setInstanceObjects(List<InstanceObjectTemplate> instanceObjects) {
    this.instanceObjects = instanceObjects;
  }
}
