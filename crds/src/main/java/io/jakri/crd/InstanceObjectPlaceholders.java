package io.jakri.crd;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The placeholders of {@code spec.instanceObjects} ({@link InstanceObjectTemplate}), in the style
 * of Akri's {@code {{PLACEHOLDER}}}: how a template is checked ({@link #check}, used by {@code
 * validate} and the admission webhook) and rendered for one Instance ({@link #render}, used by the
 * controller). Placeholders are replaced in every string value and every map key, never in numbers
 * or booleans, and never change the shape of the manifest:
 *
 * <ul>
 *   <li>{@code {{INSTANCE_NAME}}} — the Instance's name
 *   <li>{@code {{CONFIGURATION_NAME}}} — its Configuration's name
 *   <li>{@code {{NAMESPACE}}} — their namespace
 *   <li>{@code {{RESOURCE_NAME}}} and Akri's {@code {{PLACEHOLDER}}} — {@code akri.sh/<instance>}
 *   <li>{@code {{NODE_NAME}}} — the first node of the Instance's {@code nodes}
 *   <li>{@code {{NODES}}} — all its nodes, joined with {@code ,}
 *   <li>{@code {{PROPERTY:KEY}}} — the value of {@code KEY} in the Instance's {@code
 *       brokerProperties} (an Instance without it gets no object from that template; the controller
 *       reports it)
 * </ul>
 *
 * Pure and thread-safe.
 */
public final class InstanceObjectPlaceholders {

  public static final String INSTANCE_NAME = "INSTANCE_NAME";
  public static final String CONFIGURATION_NAME = "CONFIGURATION_NAME";
  public static final String NAMESPACE = "NAMESPACE";
  public static final String RESOURCE_NAME = "RESOURCE_NAME";
  public static final String PLACEHOLDER = "PLACEHOLDER";
  public static final String NODE_NAME = "NODE_NAME";
  public static final String NODES = "NODES";
  public static final String PROPERTY_PREFIX = "PROPERTY:";

  /** Every placeholder name, as written between the braces, in the order of the docs. */
  public static final List<String> NAMES =
      List.of(
          INSTANCE_NAME,
          CONFIGURATION_NAME,
          NAMESPACE,
          RESOURCE_NAME,
          PLACEHOLDER,
          NODE_NAME,
          NODES,
          PROPERTY_PREFIX + "KEY");

  /** Labels the controller sets on every object it renders; a template may not set them. */
  public static final Set<String> RESERVED_LABELS =
      Set.of(
          "akri.sh/configuration",
          "akri.sh/instance",
          "akri.sh/instance-namespace",
          "app.kubernetes.io/managed-by");

  private static final Pattern TOKEN = Pattern.compile("\\{\\{([^{}]*)}}");
  private static final Pattern PROPERTY_KEY = Pattern.compile("[A-Za-z_][A-Za-z0-9_.\\-]*");
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final int NAME_LIMIT = 63;

  private InstanceObjectPlaceholders() {}

  /** What an Instance gives a template. */
  public record Values(
      String instance,
      String configuration,
      String namespace,
      List<String> nodes,
      Map<String, String> properties) {
    public Values {
      nodes = List.copyOf(nodes);
      properties = Map.copyOf(properties);
    }
  }

  /**
   * One problem of a template: {@code index} in {@code spec.instanceObjects}, {@code path} inside
   * that object ({@code metadata.name}, {@code spec.template.metadata.labels.app}; empty for the
   * object itself) and a one-line message.
   */
  public record Problem(int index, String path, String message) {}

  /** A template that cannot be rendered for one Instance, with the reason. */
  public static final class Unrenderable extends Exception {
    private static final long serialVersionUID = 1L;

    Unrenderable(String message) {
      super(message);
    }
  }

  /**
   * The problems of {@code templates} (each as {@link InstanceObjectTemplate#toMap}), in order:
   * missing or empty {@code apiVersion}/{@code kind}; unknown placeholders; a {@code metadata.name}
   * without {@code {{INSTANCE_NAME}}} (every Instance would write the same object) or that is not a
   * DNS-1123 subdomain once rendered; a {@code metadata.namespace}, {@code generateName} or {@code
   * ownerReferences} (the controller sets where an object goes and who owns it); a label the
   * controller sets ({@link #RESERVED_LABELS}); a {@code status}; two templates giving the same
   * kind and name.
   */
  public static List<Problem> check(List<Map<String, Object>> templates) {
    List<Problem> problems = new ArrayList<>();
    Map<String, Integer> seen = new LinkedHashMap<>();
    for (int i = 0; i < templates.size(); i++) {
      Map<String, Object> t = templates.get(i);
      if (t == null) {
        problems.add(new Problem(i, "", "must be an object (a Kubernetes manifest)"));
        continue;
      }
      for (String field : List.of("apiVersion", "kind")) {
        Object v = t.get(field);
        if (!(v instanceof String s) || s.isBlank()) {
          problems.add(new Problem(i, field, "required: a non-empty string"));
        } else if (TOKEN.matcher(s).find()) {
          problems.add(new Problem(i, field, "placeholders are not allowed here"));
        }
      }
      walk(t, "", i, problems);
      Object metadata = t.get("metadata");
      String name = null;
      if (metadata != null && !(metadata instanceof Map)) {
        problems.add(new Problem(i, "metadata", "must be an object"));
      } else if (metadata instanceof Map<?, ?> m) {
        for (String field : List.of("namespace", "generateName", "ownerReferences")) {
          if (m.containsKey(field)) {
            problems.add(
                new Problem(
                    i,
                    "metadata." + field,
                    "set by the controller: objects go into the Instance's namespace (none for"
                        + " cluster-scoped kinds), named after the Instance, owned by it"));
          }
        }
        Object n = m.get("name");
        if (n != null && !(n instanceof String)) {
          problems.add(new Problem(i, "metadata.name", "must be a string"));
        } else if (n instanceof String s) {
          name = s;
          checkName(s, i, problems);
        }
        if (m.get("labels") instanceof Map<?, ?> labels) {
          for (Object key : labels.keySet()) {
            if (RESERVED_LABELS.contains(String.valueOf(key))) {
              problems.add(
                  new Problem(i, "metadata.labels." + key, "set by the controller; leave it out"));
            }
          }
        }
      }
      if (t.containsKey("status")) {
        problems.add(new Problem(i, "status", "the API server ignores a status; leave it out"));
      }
      if (t.get("kind") instanceof String kind && t.get("apiVersion") instanceof String api) {
        String key = group(api) + "/" + kind + "/" + (name == null ? "" : name);
        Integer first = seen.putIfAbsent(key, i);
        if (first != null) {
          problems.add(
              new Problem(
                  i,
                  name == null ? "kind" : "metadata.name",
                  "the same "
                      + kind
                      + " as instanceObjects["
                      + first
                      + "]: give each a different metadata.name"));
        }
      }
    }
    return problems;
  }

  private static void checkName(String name, int index, List<Problem> problems) {
    if (!name.contains("{{" + INSTANCE_NAME + "}}")) {
      problems.add(
          new Problem(
              index,
              "metadata.name",
              "must contain {{INSTANCE_NAME}}: otherwise every Instance would write the same"
                  + " object"));
      return;
    }
    // A long Configuration name and 6 hex digits: the longest Instance name the agent makes.
    Values sample =
        new Values(
            "a".repeat(56) + "-0a1b2c", "a".repeat(56), "default", List.of("node"), Map.of());
    String rendered;
    try {
      rendered = substitute(name, sample);
    } catch (Unrenderable e) {
      rendered = null;
    }
    if (rendered != null
        && !rendered.contains("{{")
        && !DNS_SUBDOMAIN.matcher(rendered).matches()) {
      problems.add(
          new Problem(
              index,
              "metadata.name",
              "not a valid object name once rendered (lower-case letters, digits, '-' and '.')"));
    }
  }

  private static void walk(Object node, String path, int index, List<Problem> problems) {
    if (node instanceof Map<?, ?> map) {
      for (Map.Entry<?, ?> e : map.entrySet()) {
        String key = String.valueOf(e.getKey());
        String child = path.isEmpty() ? key : path + "." + key;
        unknownTokens(key, child, index, problems);
        walk(e.getValue(), child, index, problems);
      }
    } else if (node instanceof List<?> list) {
      for (int i = 0; i < list.size(); i++) {
        walk(list.get(i), path + "[" + i + "]", index, problems);
      }
    } else if (node instanceof String s) {
      unknownTokens(s, path, index, problems);
    }
  }

  private static void unknownTokens(String text, String path, int index, List<Problem> problems) {
    Matcher m = TOKEN.matcher(text);
    while (m.find()) {
      String token = m.group(1);
      if (token.startsWith(PROPERTY_PREFIX)) {
        String key = token.substring(PROPERTY_PREFIX.length());
        if (!PROPERTY_KEY.matcher(key).matches()) {
          problems.add(
              new Problem(
                  index, path, "{{" + token + "}}: a property key is letters, digits and _ . -"));
        }
      } else if (!NAMES.contains(token)) {
        problems.add(
            new Problem(
                index,
                path,
                "unknown placeholder {{"
                    + token
                    + "}}; known: "
                    + String.join(", ", NAMES.stream().map(n -> "{{" + n + "}}").toList())));
      }
    }
  }

  /**
   * {@code template} rendered for one Instance: a deep copy with every placeholder replaced, and
   * {@code metadata.name} set to {@link #defaultName} when the template has none.
   *
   * @throws Unrenderable when the template uses a property the Instance does not have (or has no
   *     node for {@code {{NODE_NAME}}})
   */
  public static Map<String, Object> render(Map<String, Object> template, Values values)
      throws Unrenderable {
    @SuppressWarnings("unchecked")
    Map<String, Object> out = (Map<String, Object>) copy(template, values);
    Object metadata = out.get("metadata");
    Map<String, Object> meta;
    if (metadata instanceof Map<?, ?>) {
      @SuppressWarnings("unchecked")
      Map<String, Object> m = (Map<String, Object>) metadata;
      meta = m;
    } else {
      meta = new LinkedHashMap<>();
      out.put("metadata", meta);
    }
    if (!(meta.get("name") instanceof String)) {
      meta.put("name", defaultName(values.instance(), String.valueOf(out.get("kind"))));
    }
    return out;
  }

  /**
   * The name of an object whose template has none: {@code <instance>-<kind in lower case>}, cut and
   * followed by 10 hex digits of SHA-256 over the whole name when longer than 63 characters (so it
   * is also a valid Service name).
   */
  public static String defaultName(String instance, String kind) {
    String plain = instance + "-" + kind.toLowerCase(Locale.ROOT);
    if (plain.length() <= NAME_LIMIT) {
      return plain;
    }
    String hash = sha256Hex(plain).substring(0, 10);
    String base = plain.substring(0, NAME_LIMIT - hash.length() - 1).replaceAll("[-.]+$", "");
    return base + "-" + hash;
  }

  private static Object copy(Object node, Values values) throws Unrenderable {
    if (node instanceof Map<?, ?> map) {
      Map<String, Object> out = new LinkedHashMap<>();
      for (Map.Entry<?, ?> e : map.entrySet()) {
        out.put(substitute(String.valueOf(e.getKey()), values), copy(e.getValue(), values));
      }
      return out;
    }
    if (node instanceof List<?> list) {
      List<Object> out = new ArrayList<>(list.size());
      for (Object o : list) {
        out.add(copy(o, values));
      }
      return out;
    }
    if (node instanceof String s) {
      return substitute(s, values);
    }
    return node;
  }

  private static String substitute(String text, Values values) throws Unrenderable {
    if (text.indexOf("{{") < 0) {
      return text;
    }
    Matcher m = TOKEN.matcher(text);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      m.appendReplacement(out, Matcher.quoteReplacement(value(m.group(1), values)));
    }
    m.appendTail(out);
    return out.toString();
  }

  private static String value(String token, Values v) throws Unrenderable {
    switch (token) {
      case INSTANCE_NAME:
        return v.instance();
      case CONFIGURATION_NAME:
        return v.configuration();
      case NAMESPACE:
        return v.namespace();
      case RESOURCE_NAME:
      case PLACEHOLDER:
        return "akri.sh/" + v.instance();
      case NODE_NAME:
        if (v.nodes().isEmpty()) {
          throw new Unrenderable("{{NODE_NAME}}: the Instance lists no node");
        }
        return v.nodes().get(0);
      case NODES:
        return String.join(",", v.nodes());
      default:
        if (token.startsWith(PROPERTY_PREFIX)) {
          String key = token.substring(PROPERTY_PREFIX.length());
          String value = v.properties().get(key);
          if (value == null) {
            throw new Unrenderable("{{" + token + "}}: the Instance has no property " + key);
          }
          return value;
        }
        throw new Unrenderable("unknown placeholder {{" + token + "}}");
    }
  }

  /**
   * The API group of an {@code apiVersion}: {@code ""} for {@code v1}, {@code apps} for {@code
   * apps/v1}.
   */
  public static String group(String apiVersion) {
    int slash = apiVersion.indexOf('/');
    return slash < 0 ? "" : apiVersion.substring(0, slash);
  }

  private static String sha256Hex(String s) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }
}
