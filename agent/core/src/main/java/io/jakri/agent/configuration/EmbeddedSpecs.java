package io.jakri.agent.configuration;

import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.introspect.BeanPropertyDefinition;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ServiceSpec;
import io.fabric8.kubernetes.api.model.batch.v1.JobSpec;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Checks the Kubernetes objects a Configuration embeds ({@code brokerPodSpec}, {@code
 * brokerJobSpec}, {@code instanceServiceSpec}, {@code configurationServiceSpec}) against the fields
 * and value types of the Kubernetes API, as the API server will when the controller creates the
 * broker or Service: the CRD keeps them opaque ({@code x-kubernetes-preserve-unknown-fields}), so
 * without this a misspelt field is dropped quietly and {@code port: eighty} surfaces only as the
 * controller's failed create. Reports every problem with its path ({@code
 * spec.brokerSpec.brokerPodSpec.containers[0].imagePullPolcy: unknown field}). The field set is
 * fabric8's model of the Kubernetes API, read through Jackson's bean introspection. Not thread-safe
 * (one per parse).
 */
final class EmbeddedSpecs {

  /** Deepest nesting walked; a PodSpec is about 12 levels deep at most. */
  private static final int MAX_DEPTH = 40;

  /** Most problems reported per embedded object; a wholly wrong object would list hundreds. */
  private static final int MAX_PROBLEMS = 20;

  private final ObjectMapper mapper = new ObjectMapper();
  private final Map<JavaType, Map<String, JavaType>> properties = new HashMap<>();

  /** The problems of {@code spec}'s embedded objects, each naming its field. */
  List<String> problems(Map<String, Object> spec) {
    List<String> problems = new ArrayList<>();
    if (spec.get("brokerSpec") instanceof Map<?, ?> broker) {
      Object pod = broker.get("brokerPodSpec");
      if (pod != null) {
        String field = "spec.brokerSpec.brokerPodSpec";
        check(pod, PodSpec.class, field, problems);
        podNeeds(pod, field, problems);
      }
      Object job = broker.get("brokerJobSpec");
      if (job != null) {
        String field = "spec.brokerSpec.brokerJobSpec";
        check(job, JobSpec.class, field, problems);
        Object podSpec = at(at(job, "template"), "spec");
        if (podSpec == null) {
          problems.add(field + ".template.spec is required (the Pod each Job runs)");
        } else {
          podNeeds(podSpec, field + ".template.spec", problems);
        }
      }
    }
    for (String service : List.of("instanceServiceSpec", "configurationServiceSpec")) {
      Object value = spec.get(service);
      if (value != null) {
        String field = "spec." + service;
        check(value, ServiceSpec.class, field, problems);
        servicePorts(value, field, problems);
      }
    }
    return problems;
  }

  private void check(Object value, Class<?> type, String field, List<String> problems) {
    List<String> found = new ArrayList<>();
    walk(value, mapper.constructType(type), field, found, 0);
    if (found.size() > MAX_PROBLEMS) {
      int more = found.size() - MAX_PROBLEMS;
      found = new ArrayList<>(found.subList(0, MAX_PROBLEMS));
      found.add(field + ": " + more + " more problems not listed");
    }
    problems.addAll(found);
  }

  private void walk(Object value, JavaType type, String path, List<String> problems, int depth) {
    if (value == null || depth > MAX_DEPTH) {
      return; // null is "absent" to the API server
    }
    Class<?> raw = type.getRawClass();
    if (raw == Object.class || raw == IntOrString.class && isIntOrString(value)) {
      return;
    }
    if (raw == IntOrString.class) {
      problems.add(path + " must be an integer or a string but is " + shape(value));
    } else if (raw == Quantity.class) {
      if (!(value instanceof String || value instanceof Number)) {
        problems.add(path + " must be a quantity (such as 100m or 64Mi) but is " + shape(value));
      }
    } else if (raw == String.class) {
      if (!(value instanceof String)) {
        problems.add(path + " must be a string but is " + shape(value) + Fields.quoteHint(value));
      }
    } else if (isInteger(raw)) {
      if (!(value instanceof Integer || value instanceof Long || value instanceof BigInteger)) {
        problems.add(path + " must be an integer but is " + shape(value));
      }
    } else if (raw == Boolean.class || raw == boolean.class) {
      if (!(value instanceof Boolean)) {
        problems.add(path + " must be true or false but is " + shape(value));
      }
    } else if (raw == Double.class || raw == double.class || raw == Float.class) {
      if (!(value instanceof Number)) {
        problems.add(path + " must be a number but is " + shape(value));
      }
    } else if (type.isMapLikeType()) {
      if (!(value instanceof Map<?, ?> map)) {
        problems.add(path + " must be a mapping but is " + shape(value));
        return;
      }
      for (Map.Entry<?, ?> e : map.entrySet()) {
        walk(e.getValue(), type.getContentType(), path + "." + e.getKey(), problems, depth + 1);
      }
    } else if (type.isCollectionLikeType() || type.isArrayType()) {
      if (!(value instanceof List<?> list)) {
        problems.add(path + " must be a list but is " + shape(value));
        return;
      }
      for (int i = 0; i < list.size(); i++) {
        walk(list.get(i), type.getContentType(), path + "[" + i + "]", problems, depth + 1);
      }
    } else if (raw.getName().startsWith("io.fabric8.kubernetes.api.model")) {
      if (!(value instanceof Map<?, ?> map)) {
        problems.add(path + " must be a mapping but is " + shape(value));
        return;
      }
      Map<String, JavaType> known = properties(type);
      for (Map.Entry<?, ?> e : map.entrySet()) {
        String name = String.valueOf(e.getKey());
        JavaType property = known.get(name);
        if (property == null) {
          problems.add(path + "." + name + ": unknown field");
        } else {
          walk(e.getValue(), property, path + "." + name, problems, depth + 1);
        }
      }
    }
    // Any other type (times, raw extensions): whatever the YAML holds.
  }

  /** The JSON fields of a fabric8 model class and their types, as Jackson reads them. */
  private Map<String, JavaType> properties(JavaType type) {
    return properties.computeIfAbsent(
        type,
        t -> {
          BeanDescription bean = mapper.getDeserializationConfig().introspect(t);
          Map<String, JavaType> result = new HashMap<>();
          for (BeanPropertyDefinition p : bean.findProperties()) {
            if (p.hasSetter() || p.hasField() || p.hasConstructorParameter()) {
              result.put(p.getName(), p.getPrimaryType());
            }
          }
          result.remove("additionalProperties");
          return result;
        });
  }

  /** A Pod needs containers, each with a name, as the API server requires. */
  private static void podNeeds(Object podSpec, String field, List<String> problems) {
    Object containers = at(podSpec, "containers");
    if (!(containers instanceof List<?> list) || list.isEmpty()) {
      if (containers == null || containers instanceof List<?>) {
        problems.add(field + ".containers is required: a Pod runs at least one container");
      }
      return;
    }
    for (int i = 0; i < list.size(); i++) {
      Object name = at(list.get(i), "name");
      if (list.get(i) instanceof Map<?, ?> && (name == null || "".equals(name))) {
        problems.add(field + ".containers[" + i + "].name is required");
      }
    }
  }

  /** Service ports are 1 to 65535, as the API server requires. */
  private static void servicePorts(Object serviceSpec, String field, List<String> problems) {
    if (!(at(serviceSpec, "ports") instanceof List<?> ports)) {
      return;
    }
    for (int i = 0; i < ports.size(); i++) {
      Object port = at(ports.get(i), "port");
      if (ports.get(i) instanceof Map<?, ?> && port == null) {
        problems.add(field + ".ports[" + i + "].port is required");
      } else if (port instanceof Integer p && (p < 1 || p > 65535)) {
        problems.add(field + ".ports[" + i + "].port must be 1 to 65535 but is " + p);
      }
    }
  }

  private static Object at(Object map, String key) {
    return map instanceof Map<?, ?> m ? m.get(key) : null;
  }

  private static boolean isIntOrString(Object value) {
    return value instanceof String || value instanceof Integer || value instanceof Long;
  }

  private static boolean isInteger(Class<?> raw) {
    return raw == Integer.class
        || raw == int.class
        || raw == Long.class
        || raw == long.class
        || raw == Short.class;
  }

  private static String shape(Object value) {
    if (value instanceof String s) {
      return "\"" + (s.length() > 40 ? s.substring(0, 40) + "…" : s) + "\"";
    }
    if (value instanceof Map) {
      return "a mapping";
    }
    if (value instanceof List) {
      return "a list";
    }
    return String.valueOf(value);
  }
}
