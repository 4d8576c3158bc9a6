package io.jakri.controller.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.jakri.controller.broker.BrokerLabels;
import io.jakri.controller.broker.BrokerTemplates;
import io.jakri.controller.objects.InstanceObjects;
import io.jakri.controller.objects.ServedResource;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What must exist for a Configuration's brokers to be ready: per Instance, each broker Pod, Job and
 * instance object by name and template hash. Rendering the templates costs far more than looking an
 * object up in the cache, and a status check runs on every broker event, so each Instance's
 * expectations are kept until the Configuration or the Instance changes (their resourceVersions).
 * Thread-safe; one Configuration is checked by one worker at a time.
 */
final class ExpectedBrokers {

  /** One object that must be in the cache. */
  sealed interface Expected {
    /** A broker Pod with this name and template hash. */
    record PodNamed(String name, String hash) implements Expected {}

    /** A broker Job with this name. */
    record JobNamed(String name) implements Expected {}

    /** An instance object of this kind, name and template hash. */
    record ObjectNamed(ServedResource where, String name, String hash) implements Expected {}

    /** A template that renders to nothing creatable: never ready. */
    record Unmet() implements Expected {}
  }

  /** Where broker objects are looked up: the controller's cache. */
  interface Observed {
    Optional<? extends HasMetadata> pod(String name);

    Optional<? extends HasMetadata> job(String name);

    Optional<? extends HasMetadata> object(ServedResource where, String name);

    /** The controller's cache. */
    static Observed of(ClusterCache cache) {
      return new Observed() {
        @Override
        public Optional<? extends HasMetadata> pod(String name) {
          return cache.pod(name);
        }

        @Override
        public Optional<? extends HasMetadata> job(String name) {
          return cache.job(name);
        }

        @Override
        public Optional<? extends HasMetadata> object(ServedResource where, String name) {
          return cache.object(where, name);
        }
      };
    }
  }

  private record Entry(String configurationVersion, String instanceVersion, List<Expected> all) {}

  private final BrokerTemplates templates;
  private final InstanceObjects objects;
  private final Map<String, Map<String, Entry>> byConfiguration = new ConcurrentHashMap<>();

  ExpectedBrokers(BrokerTemplates templates, InstanceObjects objects) {
    this.templates = templates;
    this.objects = objects;
  }

  /** Whether every expected object of {@code instances} of {@code c} is in {@code cache}. */
  boolean allExist(Configuration c, List<Instance> instances, Observed cache) {
    String name = c.getMetadata().getName();
    Map<String, Entry> before = byConfiguration.getOrDefault(name, Map.of());
    Map<String, Entry> now = new HashMap<>();
    boolean all = true;
    for (Instance i : instances) {
      String instanceName = i.getMetadata().getName();
      Entry entry = before.get(instanceName);
      String cv = c.getMetadata().getResourceVersion();
      String iv = i.getMetadata().getResourceVersion();
      if (entry == null
          || cv == null
          || iv == null
          || !cv.equals(entry.configurationVersion())
          || !iv.equals(entry.instanceVersion())) {
        entry = new Entry(cv, iv, render(c, i));
      }
      now.put(instanceName, entry);
      if (all) {
        all = entry.all().stream().allMatch(e -> exists(e, cache));
      }
    }
    byConfiguration.put(name, now);
    return all;
  }

  /** The expectations kept for one Instance of a Configuration, for tests. */
  Optional<List<Expected>> kept(String configuration, String instance) {
    return Optional.ofNullable(byConfiguration.getOrDefault(configuration, Map.of()).get(instance))
        .map(Entry::all);
  }

  /** Forgets a Configuration that is gone. */
  void forget(String configuration) {
    byConfiguration.remove(configuration);
  }

  private List<Expected> render(Configuration c, Instance i) {
    List<Expected> out = new ArrayList<>();
    List<String> nodes =
        i.getSpec() == null || i.getSpec().getNodes() == null ? List.of() : i.getSpec().getNodes();
    for (String node : nodes) {
      templates
          .pod(c, i, node)
          .ifPresent(p -> out.add(new Expected.PodNamed(p.getMetadata().getName(), hash(p))));
    }
    if (!nodes.isEmpty()) {
      templates.job(c, i).ifPresent(j -> out.add(new Expected.JobNamed(j.getMetadata().getName())));
    }
    for (InstanceObjects.Desired d : objects.render(c, i)) {
      if (d instanceof InstanceObjects.Desired.Rendered r) {
        out.add(
            new Expected.ObjectNamed(
                r.where(), r.object().getMetadata().getName(), hash(r.object())));
      } else {
        out.add(new Expected.Unmet());
      }
    }
    return List.copyOf(out);
  }

  private static boolean exists(Expected e, Observed cache) {
    if (e instanceof Expected.PodNamed p) {
      return matches(cache.pod(p.name()), p.hash());
    } else if (e instanceof Expected.JobNamed j) {
      return cache.job(j.name()).isPresent();
    } else if (e instanceof Expected.ObjectNamed o) {
      return matches(cache.object(o.where(), o.name()), o.hash());
    }
    return false;
  }

  private static boolean matches(Optional<? extends HasMetadata> found, String hash) {
    return found.filter(f -> Objects.equals(hash(f), hash)).isPresent();
  }

  static String hash(HasMetadata o) {
    Map<String, String> a = o.getMetadata().getAnnotations();
    return a == null ? null : a.get(BrokerLabels.TEMPLATE_HASH);
  }
}
