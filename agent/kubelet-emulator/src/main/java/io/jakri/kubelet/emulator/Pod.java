package io.jakri.kubelet.emulator;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A pod to admit: init containers run one after the other before the app containers, as on a real
 * node. Container names must be unique across both lists.
 *
 * @param namespace pod namespace
 * @param name pod name; (namespace, name) identifies the pod in the emulator
 * @param initContainers init containers in run order
 * @param containers app containers
 */
public record Pod(
    String namespace, String name, List<Container> initContainers, List<Container> containers) {

  public Pod {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    initContainers = List.copyOf(initContainers);
    containers = List.copyOf(containers);
    Set<String> names = new HashSet<>();
    for (Container c : allContainers(initContainers, containers)) {
      if (!names.add(c.name())) {
        throw new IllegalArgumentException(
            "duplicate container name " + c.name() + " in pod " + namespace + "/" + name);
      }
    }
  }

  /** A pod with app containers only. */
  public static Pod of(String namespace, String name, Container... containers) {
    return new Pod(namespace, name, List.of(), List.of(containers));
  }

  /** A pod with init containers and app containers. */
  public static Pod withInit(
      String namespace, String name, List<Container> initContainers, List<Container> containers) {
    return new Pod(namespace, name, initContainers, containers);
  }

  /** Init containers then app containers: the order in which the kubelet allocates. */
  public List<Container> allContainers() {
    return allContainers(initContainers, containers);
  }

  private static List<Container> allContainers(List<Container> init, List<Container> app) {
    List<Container> all = new ArrayList<>(init);
    all.addAll(app);
    return List.copyOf(all);
  }
}
