package io.jakri.controller.broker;

import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NodeAffinity;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceSpec;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobSpec;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Builds the desired broker Pods, Jobs and Services from a Configuration and an Instance. Pure: the
 * inputs are never modified (specs are deep-copied), the same inputs give equal objects, and each
 * object carries a {@link BrokerLabels#TEMPLATE_HASH} of its spec so a changed Configuration is
 * noticed by comparing one annotation. Thread-safe.
 */
public final class BrokerTemplates {

  /** Akri's placeholder resource key, replaced by {@code akri.sh/<instance>}. */
  public static final String PLACEHOLDER = "{{PLACEHOLDER}}";

  private final KubernetesSerialization serialization;

  public BrokerTemplates(KubernetesSerialization serialization) {
    this.serialization = serialization;
  }

  /** The extended resource an Instance is advertised as: {@code akri.sh/<instance>}. */
  public static String resourceName(String instance) {
    return "akri.sh/" + instance;
  }

  /**
   * The broker Pod of {@code instance} on {@code node}, or empty when the Configuration has no
   * {@code brokerPodSpec}.
   */
  public Optional<Pod> pod(Configuration configuration, Instance instance, String node) {
    PodSpec template = brokerPodSpec(configuration).orElse(null);
    if (template == null) {
      return Optional.empty();
    }
    String name = instance.getMetadata().getName();
    PodSpec spec = serialization.clone(template);
    substitutePlaceholders(spec, name);
    pinToNode(spec, node);
    boolean shared =
        instance.getSpec() != null && Boolean.TRUE.equals(instance.getSpec().getShared());
    String podName = BrokerNames.podName(name, node, shared);
    Map<String, String> labels = akriLabels(podName);
    labels.putAll(brokerLabels(configuration, name));
    labels.put(BrokerLabels.TARGET_NODE, BrokerNames.labelValue(node));
    ObjectMeta meta =
        new ObjectMetaBuilder()
            .withName(podName)
            .withNamespace(instance.getMetadata().getNamespace())
            .withLabels(labels)
            .withAnnotations(
                Map.of(
                    BrokerLabels.TARGET_NODE_ANNOTATION,
                    node,
                    BrokerLabels.TEMPLATE_HASH,
                    hash(spec)))
            .withOwnerReferences(ownerReference(instance))
            .build();
    Pod pod = new Pod();
    pod.setMetadata(meta);
    pod.setSpec(spec);
    return Optional.of(pod);
  }

  /**
   * The broker Job of {@code instance}, named after the Configuration's generation, or empty when
   * the Configuration has no {@code brokerJobSpec}.
   */
  public Optional<Job> job(Configuration configuration, Instance instance) {
    Optional<JobSpec> template =
        Optional.ofNullable(configuration.getSpec())
            .map(s -> s.getBrokerSpec())
            .map(b -> b.getBrokerJobSpec());
    if (template.isEmpty()) {
      return Optional.empty();
    }
    String name = instance.getMetadata().getName();
    JobSpec spec = serialization.clone(template.get());
    PodTemplateSpec podTemplate =
        Optional.ofNullable(spec.getTemplate()).orElseGet(PodTemplateSpec::new);
    spec.setTemplate(podTemplate);
    if (podTemplate.getSpec() != null) {
      substitutePlaceholders(podTemplate.getSpec(), name);
    }
    Map<String, String> labels = brokerLabels(configuration, name);
    ObjectMeta templateMeta =
        Optional.ofNullable(podTemplate.getMetadata()).orElseGet(ObjectMeta::new);
    Map<String, String> podLabels =
        new LinkedHashMap<>(Optional.ofNullable(templateMeta.getLabels()).orElse(Map.of()));
    podLabels.putAll(labels);
    templateMeta.setLabels(podLabels);
    podTemplate.setMetadata(templateMeta);
    long generation = generation(configuration);
    String jobName = BrokerNames.jobName(name, generation);
    Map<String, String> jobLabels = akriLabels(jobName);
    jobLabels.putAll(labels);
    Job job = new Job();
    job.setMetadata(
        new ObjectMetaBuilder()
            .withName(jobName)
            .withNamespace(instance.getMetadata().getNamespace())
            .withLabels(jobLabels)
            .withAnnotations(Map.of(BrokerLabels.TEMPLATE_HASH, hash(spec)))
            .withOwnerReferences(ownerReference(instance))
            .build());
    job.setSpec(spec);
    return Optional.of(job);
  }

  /**
   * {@code <instance>-svc} selecting the Instance's brokers, or empty when the Configuration has no
   * {@code instanceServiceSpec}.
   */
  public Optional<Service> instanceService(Configuration configuration, Instance instance) {
    ServiceSpec template =
        configuration.getSpec() == null ? null : configuration.getSpec().getInstanceServiceSpec();
    if (template == null) {
      return Optional.empty();
    }
    String name = instance.getMetadata().getName();
    Map<String, String> selector = new LinkedHashMap<>();
    selector.put(BrokerLabels.INSTANCE, name);
    return Optional.of(
        service(
            template,
            BrokerNames.instanceServiceName(name),
            instance.getMetadata().getNamespace(),
            brokerLabels(configuration, name),
            selector,
            ownerReference(instance)));
  }

  /**
   * {@code <configuration>-svc} selecting all the Configuration's brokers, or empty when it has no
   * {@code configurationServiceSpec}.
   */
  public Optional<Service> configurationService(Configuration configuration) {
    ServiceSpec template =
        configuration.getSpec() == null
            ? null
            : configuration.getSpec().getConfigurationServiceSpec();
    if (template == null) {
      return Optional.empty();
    }
    String name = configuration.getMetadata().getName();
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(BrokerLabels.MANAGED_BY, BrokerLabels.CONTROLLER);
    labels.put(BrokerLabels.CONFIGURATION, name);
    Map<String, String> selector = new LinkedHashMap<>();
    selector.put(BrokerLabels.CONFIGURATION, name);
    return Optional.of(
        service(
            template,
            BrokerNames.configurationServiceName(name),
            configuration.getMetadata().getNamespace(),
            labels,
            selector,
            ownerReference(configuration)));
  }

  private Service service(
      ServiceSpec template,
      String name,
      String namespace,
      Map<String, String> labels,
      Map<String, String> ownSelector,
      OwnerReference owner) {
    ServiceSpec spec = serialization.clone(template);
    Map<String, String> allLabels = akriLabels(name);
    allLabels.putAll(labels);
    Map<String, String> selector =
        new LinkedHashMap<>(Optional.ofNullable(spec.getSelector()).orElse(Map.of()));
    selector.putAll(ownSelector);
    spec.setSelector(selector);
    Service service = new Service();
    service.setMetadata(
        new ObjectMetaBuilder()
            .withName(name)
            .withNamespace(namespace)
            .withLabels(allLabels)
            .withAnnotations(Map.of(BrokerLabels.TEMPLATE_HASH, hash(spec)))
            .withOwnerReferences(owner)
            .build());
    service.setSpec(spec);
    return service;
  }

  /**
   * Replaces every {@value #PLACEHOLDER} key in the resource limits and requests of all containers
   * and init containers of {@code spec} by {@code akri.sh/<instance>}, keeping the quantity. Akri
   * does the same, so Akri Configurations work unchanged. Modifies {@code spec}.
   */
  public static void substitutePlaceholders(PodSpec spec, String instance) {
    List<Container> all = new ArrayList<>();
    Optional.ofNullable(spec.getContainers()).ifPresent(all::addAll);
    Optional.ofNullable(spec.getInitContainers()).ifPresent(all::addAll);
    for (Container c : all) {
      ResourceRequirements r = c.getResources();
      if (r == null) {
        continue;
      }
      r.setLimits(replaceKey(r.getLimits(), instance));
      r.setRequests(replaceKey(r.getRequests(), instance));
    }
  }

  private static Map<String, Quantity> replaceKey(Map<String, Quantity> in, String instance) {
    if (in == null || !in.containsKey(PLACEHOLDER)) {
      return in;
    }
    Map<String, Quantity> out = new LinkedHashMap<>();
    in.forEach((k, v) -> out.put(PLACEHOLDER.equals(k) ? resourceName(instance) : k, v));
    return out;
  }

  /**
   * Adds a required node affinity on {@code metadata.name == node} to every node selector term
   * (terms are ORed, so each must carry it), or one term with it when there are none.
   */
  static void pinToNode(PodSpec spec, String node) {
    Affinity affinity = Optional.ofNullable(spec.getAffinity()).orElseGet(Affinity::new);
    NodeAffinity nodeAffinity =
        Optional.ofNullable(affinity.getNodeAffinity()).orElseGet(NodeAffinity::new);
    NodeSelector required =
        Optional.ofNullable(nodeAffinity.getRequiredDuringSchedulingIgnoredDuringExecution())
            .orElseGet(NodeSelector::new);
    List<NodeSelectorTerm> terms =
        new ArrayList<>(Optional.ofNullable(required.getNodeSelectorTerms()).orElse(List.of()));
    if (terms.isEmpty()) {
      terms.add(new NodeSelectorTerm());
    }
    for (NodeSelectorTerm term : terms) {
      List<io.fabric8.kubernetes.api.model.NodeSelectorRequirement> fields =
          new ArrayList<>(Optional.ofNullable(term.getMatchFields()).orElse(List.of()));
      fields.add(
          new NodeSelectorRequirementBuilder()
              .withKey("metadata.name")
              .withOperator("In")
              .withValues(node)
              .build());
      term.setMatchFields(fields);
    }
    required.setNodeSelectorTerms(terms);
    nodeAffinity.setRequiredDuringSchedulingIgnoredDuringExecution(required);
    affinity.setNodeAffinity(nodeAffinity);
    spec.setAffinity(affinity);
  }

  /** Akri's {@code app=<object name>} and {@code controller=akri.sh}. */
  private static Map<String, String> akriLabels(String objectName) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(BrokerLabels.APP, BrokerNames.labelValue(objectName));
    labels.put(BrokerLabels.AKRI_CONTROLLER, BrokerLabels.AKRI);
    return labels;
  }

  private static Map<String, String> brokerLabels(Configuration configuration, String instance) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(BrokerLabels.MANAGED_BY, BrokerLabels.CONTROLLER);
    labels.put(BrokerLabels.CONFIGURATION, configuration.getMetadata().getName());
    labels.put(BrokerLabels.INSTANCE, instance);
    return labels;
  }

  private static OwnerReference ownerReference(HasMetadata owner) {
    return new OwnerReferenceBuilder()
        .withApiVersion(owner.getApiVersion())
        .withKind(owner.getKind())
        .withName(owner.getMetadata().getName())
        .withUid(owner.getMetadata().getUid())
        .withController(true)
        .withBlockOwnerDeletion(true)
        .build();
  }

  /** The Configuration's brokerPodSpec, if it has one. */
  public static Optional<PodSpec> brokerPodSpec(Configuration configuration) {
    return Optional.ofNullable(configuration.getSpec())
        .map(s -> s.getBrokerSpec())
        .map(b -> b.getBrokerPodSpec());
  }

  /** Whether the Configuration asks for brokers at all (a Pod or a Job spec). */
  public static boolean hasBrokers(Configuration configuration) {
    return Optional.ofNullable(configuration.getSpec())
        .map(s -> s.getBrokerSpec())
        .filter(b -> b.getBrokerPodSpec() != null || b.getBrokerJobSpec() != null)
        .isPresent();
  }

  private static long generation(Configuration configuration) {
    return Optional.ofNullable(configuration.getMetadata().getGeneration()).orElse(0L);
  }

  private String hash(Object spec) {
    return BrokerNames.sha256Hex(serialization.asJson(spec)).substring(0, 16);
  }
}
