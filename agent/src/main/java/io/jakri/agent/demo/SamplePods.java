package io.jakri.agent.demo;

import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.Pod;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which pods the demo admits once the devices are advertised, to show what a container gets.
 *
 * <ul>
 *   <li>{@link #bundled()}: the bundled examples' pods (Spookd's test pod, a debugEcho broker, the
 *       simple device plugin's test pod);
 *   <li>{@link #eachClass()}: for your own Configurations ({@code demo --config DIR}), one pod per
 *       class resource ({@code akri.sh/<configuration>} or a handler's class such as {@code
 *       example.com/widget}) asking for one device;
 *   <li>{@link #requested}: exactly the pods of {@code --pod RESOURCE=N}, one per option.
 * </ul>
 */
public sealed interface SamplePods {

  /** The pods to admit, given the node's capacity and the resources the agent serves. */
  List<Pod> pods(Map<String, Long> capacity, Collection<String> served);

  /**
   * The pods to admit, also knowing the device ids each resource advertises ({@code devices}, by
   * resource): a class resource advertises the slots of its member Instances under the slots' ids,
   * so a resource whose every device a class also offers shares its slots with that class.
   */
  default List<Pod> pods(
      Map<String, Long> capacity, Collection<String> served, Map<String, Set<String>> devices) {
    return pods(capacity, served);
  }

  static SamplePods bundled() {
    return new Bundled();
  }

  static SamplePods eachClass() {
    return new EachClass();
  }

  static SamplePods requested(List<Request> requests) {
    return new Requested(requests);
  }

  /** One {@code --pod RESOURCE=N} option. */
  record Request(String resource, long count) {

    /** Parses {@code RESOURCE=N} (N defaults to 1); the message says what is wrong. */
    public static Request parse(String text) {
      int eq = text.lastIndexOf('=');
      String resource = eq < 0 ? text : text.substring(0, eq);
      String count = eq < 0 ? "1" : text.substring(eq + 1);
      if (resource.isBlank() || !resource.contains("/")) {
        throw new IllegalArgumentException(
            "--pod \"" + text + "\": expected RESOURCE=N, e.g. akri.sh/my-config=1");
      }
      long n;
      try {
        n = Long.parseLong(count.strip());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            "--pod \"" + text + "\": N must be a whole number, e.g. akri.sh/my-config=1");
      }
      if (n < 1 || n > 1000) {
        throw new IllegalArgumentException("--pod \"" + text + "\": N must be 1 to 1000");
      }
      return new Request(resource.strip(), n);
    }
  }

  /** The bundled examples' pods, as the Spookd, Akri and simple device docs use them. */
  record Bundled() implements SamplePods {
    @Override
    public List<Pod> pods(Map<String, Long> capacity, Collection<String> served) {
      List<Pod> pods = new ArrayList<>();
      if (capacity.getOrDefault("example.com/widget", 0L) > 0
          && capacity.getOrDefault("example.com/thingamajig", 0L) > 0) {
        pods.add(
            Pod.of(
                "default",
                "spookd-test",
                Container.of(
                    "test", Map.of("example.com/widget", 1L, "example.com/thingamajig", 1L))));
      }
      capacity.keySet().stream()
          .filter(r -> r.startsWith("akri.sh/akri-debug-echo-foo-"))
          .sorted()
          .findFirst()
          .ifPresent(
              r -> pods.add(Pod.of("default", "debug-echo-broker", Container.of("broker", r, 1))));
      if (capacity.getOrDefault("example.com/simple-device", 0L) > 1) {
        pods.add(
            Pod.of(
                "default",
                "simple-device-test",
                Container.of("test", "example.com/simple-device", 2)));
      }
      return pods;
    }
  }

  /**
   * One pod per class resource the agent serves. Class resources are the ones that are not an
   * Instance's: an Instance resource is {@code akri.sh/<class name>-<6 hex>} of a served class.
   */
  record EachClass() implements SamplePods {
    @Override
    public List<Pod> pods(Map<String, Long> capacity, Collection<String> served) {
      return pods(capacity, served, Map.of());
    }

    @Override
    public List<Pod> pods(
        Map<String, Long> capacity, Collection<String> served, Map<String, Set<String>> devices) {
      TreeSet<String> resources = new TreeSet<>(served);
      List<Pod> pods = new ArrayList<>();
      for (String resource : resources) {
        if (isInstanceOfServedClass(resource, resources)
            || sharesSlotsWithAClass(resource, resources, capacity, devices)
            || capacity.getOrDefault(resource, 0L) < 1) {
          continue;
        }
        pods.add(
            Pod.of("default", podName(resource, pods.size()), Container.of("test", resource, 1)));
      }
      return pods;
    }

    private static boolean isInstanceOfServedClass(String resource, Collection<String> served) {
      return resource.startsWith("akri.sh/")
          && resource.matches(".*-[0-9a-f]{6}")
          && served.contains(resource.substring(0, resource.length() - 7));
    }

    /**
     * An Instance resource ({@code akri.sh/...}) whose every device another served resource with
     * capacity also advertises: its slots are that class's, and the class's pod may take them.
     */
    private static boolean sharesSlotsWithAClass(
        String resource,
        Collection<String> served,
        Map<String, Long> capacity,
        Map<String, Set<String>> devices) {
      Set<String> own = devices.getOrDefault(resource, Set.of());
      if (!resource.startsWith("akri.sh/") || own.isEmpty()) {
        return false;
      }
      for (String other : served) {
        if (!other.equals(resource)
            && capacity.getOrDefault(other, 0L) > 0
            && devices.getOrDefault(other, Set.of()).containsAll(own)) {
          return true;
        }
      }
      return false;
    }
  }

  /** Exactly the requested pods. */
  record Requested(List<Request> requests) implements SamplePods {
    public Requested {
      requests = List.copyOf(requests);
    }

    @Override
    public List<Pod> pods(Map<String, Long> capacity, Collection<String> served) {
      List<Pod> pods = new ArrayList<>();
      for (Request request : requests) {
        pods.add(
            Pod.of(
                "default",
                podName(request.resource(), pods.size()),
                Container.of("test", request.resource(), request.count())));
      }
      return pods;
    }
  }

  /** A DNS-label pod name for a resource, e.g. {@code example-com-widget-0}. */
  static String podName(String resource, int index) {
    String base = resource.toLowerCase().replaceAll("[^a-z0-9]+", "-").replaceAll("^-|-$", "");
    String suffix = "-" + index;
    String name =
        base.length() + suffix.length() > 63 ? base.substring(0, 63 - suffix.length()) : base;
    return Optional.of(name.replaceAll("-$", "")).orElse("pod") + suffix;
  }
}
