package io.jakri.agent.instance;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * Instances as {@code kubectl get instances -o yaml} shows them in a cluster: a {@code List} of
 * {@code akri.sh/v0} Instances with their nodes, slots ({@code deviceUsage} in Akri's wire format:
 * {@code ""} free, {@code <node>}, {@code C:<n>:<node>}) and properties. For standalone mode, where
 * there is no API server to ask. Stateless.
 */
public final class InstanceListing {

  private InstanceListing() {}

  /** The YAML text of {@code instances}, sorted by name. */
  public static String yaml(Collection<Instance> instances) {
    List<Instance> sorted = new ArrayList<>(instances);
    sorted.sort(Comparator.comparing(Instance::name));
    List<Object> items = new ArrayList<>(sorted.size());
    for (Instance instance : sorted) {
      items.add(item(instance));
    }
    Map<String, Object> list = new LinkedHashMap<>();
    list.put("apiVersion", "v1");
    list.put("kind", "List");
    list.put("items", items);
    DumperOptions options = new DumperOptions();
    options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
    options.setIndicatorIndent(0);
    options.setSplitLines(false);
    return new Yaml(options).dump(list);
  }

  private static Map<String, Object> item(Instance instance) {
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("configurationName", instance.configurationName());
    spec.put("capacity", instance.capacity());
    spec.put("shared", instance.shared());
    spec.put("nodes", List.copyOf(instance.nodes()));
    Map<String, String> usage = new LinkedHashMap<>();
    instance.deviceUsage().forEach((slot, use) -> usage.put(slot, use.print()));
    spec.put("deviceUsage", usage);
    spec.put("brokerProperties", new LinkedHashMap<>(instance.brokerProperties()));
    Map<String, Object> item = new LinkedHashMap<>();
    item.put("apiVersion", "akri.sh/v0");
    item.put("kind", "Instance");
    item.put("metadata", Map.of("name", instance.name()));
    item.put("spec", spec);
    return item;
  }
}
