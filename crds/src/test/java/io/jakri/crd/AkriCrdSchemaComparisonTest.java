package io.jakri.crd;

import static java.util.Map.entry;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * jakri's CRDs against Akri's (copies of project-akri/akri {@code deployment/helm/crds} at commit
 * 604bdcb6 in the test resources), field by field: both are flattened into {@code path -> value}
 * entries and every entry that differs must be one of the {@link #INTENDED} differences, each with
 * its reason. An unlisted difference fails, and so does a listed one that is gone (keep the list
 * true).
 *
 * <p>Paths: {@code crd:} then the CRD outside the schema ({@code versions} and printer columns
 * keyed by {@code name}); {@code schema:} then the property path ({@code .spec.nodes}), with {@code
 * []} for list items, <code>{*}</code> for map values and {@code @keyword} for a schema keyword.
 * Only {@code description} is left out (documentation, not the contract), and a printer column's
 * {@code priority: 0} (the API server's default) counts as absent.
 */
class AkriCrdSchemaComparisonTest {

  static final String ABSENT = "(absent)";

  /** One intended difference: Akri's value, jakri's value and why. */
  record Difference(String akri, String jakri, String why) {}

  /**
   * The value of a prefix entry (a path ending in {@code *}): every entry below is jakri's only.
   */
  static final String JAKRI_ONLY = "(jakri only)";

  static final Map<String, Map<String, Difference>> INTENDED =
      Map.of(
          Crds.INSTANCE_CRD_NAME,
          Map.ofEntries(
              entry(
                  "crd:spec.versions[v0].subresources",
                  new Difference(
                      "{}", ABSENT, "an empty subresources is no subresource: the same API")),
              entry(
                  "schema:.spec.brokerProperties@default",
                  new Difference(
                      "{}",
                      ABSENT,
                      "no server-side defaults: jakri's agent (like Akri's) always writes brokerProperties, deviceUsage, nodes and shared")),
              entry(
                  "schema:.spec.deviceUsage@default",
                  new Difference("{}", ABSENT, "as brokerProperties@default")),
              entry(
                  "schema:.spec.nodes@default",
                  new Difference("[]", ABSENT, "as brokerProperties@default")),
              entry(
                  "schema:.spec.shared@default",
                  new Difference("false", ABSENT, "as brokerProperties@default")),
              entry(
                  "schema:.spec.capacity@format",
                  new Difference(
                      "uint",
                      ABSENT,
                      "the generator writes no format for an Integer; minimum 1 says more")),
              entry(
                  "schema:.spec.capacity@minimum",
                  new Difference(
                      "0",
                      "1",
                      "stricter: an Instance with no slot can never be allocated; jakri's agent writes the Configuration's capacity, at least 1")),
              entry(
                  "schema:.spec.configurationName@maxLength",
                  new Difference(
                      ABSENT,
                      "56",
                      "stricter: a Configuration name is at most 56 characters (its CRD's rule), so akri.sh/<instance> stays a valid resource name")),
              entry(
                  "schema:.spec.configurationName@minLength",
                  new Difference(ABSENT, "1", "stricter: an Instance names its Configuration")),
              entry(
                  "schema:.spec.deviceUsage{*}@maxLength",
                  new Difference(
                      ABSENT,
                      "512",
                      "stricter: bounds a slot value (\"\", <node> or C:<slot>:<node>) for CEL cost and memory")),
              entry(
                  "schema:.spec.nodes[]@maxLength",
                  new Difference(
                      ABSENT,
                      "253",
                      "stricter: a node name is a DNS subdomain, at most 253 characters")),
              entry(
                  "schema:.spec.nodes[]@minLength",
                  new Difference(ABSENT, "1", "stricter: no empty node name")),
              entry(
                  "schema:.status@type",
                  new Difference(
                      ABSENT,
                      "object",
                      "fabric8's CustomResource has a status field (Void for Instance); the generator types it, the API server accepts only an object there as Akri's would prune it")),
              entry(
                  "schema:@required",
                  new Difference(
                      "[\"spec\"]",
                      ABSENT,
                      "fabric8's generator cannot mark the inherited CustomResource.spec required; every writer sends a spec, whose own required fields then apply")),
              entry(
                  "schema:@title",
                  new Difference(
                      "Instance",
                      ABSENT,
                      "documentation only (Akri's schema generator adds the type name)")),
              entry(
                  "schema:@x-kubernetes-validations",
                  new Difference(
                      ABSENT,
                      "[{\"message\":\"an Instance name is at most 63 characters, so that akri.sh/<name> is a valid extended-resource name\",\"rule\":\"self.metadata.name.size() <= 63\"}]",
                      "stricter: an Instance whose akri.sh/<name> resource name would be invalid is refused at once, not by the kubelet later"))),
          Crds.CONFIGURATION_CRD_NAME,
          Map.ofEntries(
              entry(
                  "crd:spec.versions[v0].additionalPrinterColumns[Capacity].type",
                  new Difference(
                      "string", "integer", "capacity is an integer; kubectl prints it the same")),
              entry(
                  "crd:spec.versions[v0].subresources.status",
                  new Difference(
                      ABSENT,
                      "{}",
                      "jakri's agents and controller report per-node discovery and broker state in status (Akri's write no status); a status subresource keeps spec writers from overwriting it")),
              entry(
                  "schema:.spec.brokerSpec.brokerJobSpec@nullable",
                  new Difference(
                      "true",
                      ABSENT,
                      "the API server drops a null value of a field without nullable before validation, so Akri manifests with null there still apply; jakri writes no nulls")),
              entry(
                  "schema:.spec.brokerSpec.brokerPodSpec@nullable",
                  new Difference(
                      "true",
                      ABSENT,
                      "the API server drops a null value of a field without nullable before validation, so Akri manifests with null there still apply; jakri writes no nulls")),
              entry(
                  "schema:.spec.configurationServiceSpec@nullable",
                  new Difference(
                      "true",
                      ABSENT,
                      "the API server drops a null value of a field without nullable before validation, so Akri manifests with null there still apply; jakri writes no nulls")),
              entry(
                  "schema:.spec.instanceServiceSpec@nullable",
                  new Difference(
                      "true",
                      ABSENT,
                      "the API server drops a null value of a field without nullable before validation, so Akri manifests with null there still apply; jakri writes no nulls")),
              entry(
                  "schema:.spec.discoveryHandler.discoveryProperties@nullable",
                  new Difference(
                      "true",
                      ABSENT,
                      "the API server drops a null value of a field without nullable before validation, so Akri manifests with null there still apply; jakri writes no nulls")),
              entry(
                  "schema:.spec.discoveryHandler.discoveryProperties[].value@nullable",
                  new Difference(
                      "true",
                      ABSENT,
                      "the API server drops a null value of a field without nullable before validation, so Akri manifests with null there still apply; jakri writes no nulls")),
              entry(
                  "schema:.spec.brokerSpec@x-kubernetes-validations",
                  new Difference(
                      ABSENT,
                      "[{\"message\":\"brokerSpec must set exactly one of brokerPodSpec and brokerJobSpec\",\"rule\":\"has(self.brokerPodSpec) != has(self.brokerJobSpec)\"}]",
                      "stricter: Akri's controller uses one of the two and ignores the other silently")),
              entry(
                  "schema:.spec.capacity@default",
                  new Difference(
                      ABSENT,
                      "1",
                      "Akri's agent treats a missing capacity as 1 too; the default makes it visible")),
              entry(
                  "schema:.spec.capacity@minimum",
                  new Difference(
                      ABSENT, "1", "stricter: a capacity below 1 gives Instances no slot")),
              entry(
                  "schema:.spec.discoveryHandler.discoveryProperties[].valueFrom.configMapKeyRef@required",
                  new Difference(
                      "[\"name\"]",
                      "[\"key\",\"name\"]",
                      "stricter: without a key there is no value to read")),
              entry(
                  "schema:.spec.discoveryHandler.discoveryProperties[].valueFrom.secretKeyRef@required",
                  new Difference(
                      "[\"name\"]",
                      "[\"key\",\"name\"]",
                      "stricter: without a key there is no value to read")),
              entry(
                  "schema:.spec.discoveryHandler.discoveryProperties[].valueFrom@oneOf",
                  new Difference(
                      "[{\"required\":[\"secretKeyRef\"]},{\"required\":[\"configMapKeyRef\"]}]",
                      ABSENT,
                      "the same rule as a CEL validation (next entry), which names the rule in its message")),
              entry(
                  "schema:.spec.discoveryHandler.discoveryProperties[].valueFrom@x-kubernetes-validations",
                  new Difference(
                      ABSENT,
                      "[{\"message\":\"valueFrom sets exactly one of secretKeyRef and configMapKeyRef\",\"rule\":\"has(self.secretKeyRef) != has(self.configMapKeyRef)\"}]",
                      "Akri's oneOf as CEL (fabric8's generator emits no oneOf)")),
              entry(
                  "schema:.spec.discoveryHandler.discoveryProperties[]@oneOf",
                  new Difference(
                      "[{\"required\":[\"value\"]},{\"required\":[\"valueFrom\"]}]",
                      ABSENT,
                      "the same rule as a CEL validation (next entry)")),
              entry(
                  "schema:.spec.discoveryHandler.discoveryProperties[]@x-kubernetes-validations",
                  new Difference(
                      ABSENT,
                      "[{\"message\":\"a discovery property sets exactly one of value and valueFrom\",\"rule\":\"has(self.value) != has(self.valueFrom)\"}]",
                      "Akri's oneOf as CEL (fabric8's generator emits no oneOf)")),
              entry(
                  "schema:.spec.discoveryHandler@required",
                  new Difference(
                      ABSENT,
                      "[\"name\"]",
                      "stricter: a Configuration without a handler name discovers nothing")),
              entry(
                  "schema:.spec@required",
                  new Difference(
                      ABSENT,
                      "[\"discoveryHandler\"]",
                      "stricter: a Configuration without a discovery handler discovers nothing")),
              entry(
                  "schema:.spec.instanceObjects*",
                  new Difference(
                      ABSENT,
                      JAKRI_ONLY,
                      "jakri's objects per Instance (any allowed kind, rendered by the controller); Akri has no such field")),
              entry(
                  "schema:.status*",
                  new Difference(
                      ABSENT,
                      JAKRI_ONLY,
                      "jakri's status schema (conditions, instances, nodes, observedGeneration); Akri's Configuration has no status")),
              entry(
                  "schema:@x-kubernetes-validations",
                  new Difference(
                      ABSENT,
                      "[{\"message\":\"a Configuration name is at most 56 characters, so that akri.sh/<name>-<6 hex digits> stays a valid extended-resource name\",\"rule\":\"self.metadata.name.size() <= 56\"},{\"message\":\"a Configuration name must be a DNS-1123 label: no '.'\",\"rule\":\"!self.metadata.name.contains('.')\"}]",
                      "stricter: names whose Instance resource names would be invalid are refused at once"))));

  @Test
  void instanceCrdDiffersFromAkrisOnlyAsListed() {
    compare(Crds.INSTANCE_CRD_NAME, "akri-instance-crd.yaml");
  }

  @Test
  void configurationCrdDiffersFromAkrisOnlyAsListed() {
    compare(Crds.CONFIGURATION_CRD_NAME, "akri-configuration-crd.yaml");
  }

  @Test
  void instanceCrdHasAkrisServerSideApplyMarkersAndRequiredFields() {
    Map<String, String> jakri = flatten(CrdFiles.readCommitted(Crds.INSTANCE_CRD_NAME));
    Map<String, String> akri = flatten(akri("akri-instance-crd.yaml"));
    for (String path :
        List.of(
            "schema:.spec.nodes@x-kubernetes-list-type",
            "schema:.spec.deviceUsage@x-kubernetes-map-type",
            "schema:.spec@required")) {
      assertThat(jakri.get(path)).as(path).isNotNull().isEqualTo(akri.get(path));
    }
    assertThat(jakri.get("schema:.spec@required"))
        .isEqualTo("[\"capacity\",\"cdiName\",\"configurationName\"]");
  }

  @Test
  void flatteningNamesEveryKeywordAndSeesAChange() {
    JsonNode a =
        CrdFiles.parse(
            "spec:\n  versions:\n  - name: v0\n    schema:\n      openAPIV3Schema:\n"
                + "        properties:\n          spec:\n            properties:\n"
                + "              nodes: {type: array, items: {type: string, maxLength: 5},"
                + " description: x}\n");
    assertThat(flatten(a))
        .containsExactly(
            Map.entry("crd:spec.versions[v0].name", "v0"),
            Map.entry("schema:.spec.nodes@type", "array"),
            Map.entry("schema:.spec.nodes[]@maxLength", "5"),
            Map.entry("schema:.spec.nodes[]@type", "string"));
  }

  private static void compare(String crdName, String akriFile) {
    Map<String, String> jakri = flatten(CrdFiles.readCommitted(crdName));
    Map<String, String> akri = flatten(akri(akriFile));
    Map<String, Difference> actual = differences(akri, jakri);
    Map<String, Difference> intended = INTENDED.get(crdName);
    List<String> problems = new ArrayList<>();
    actual.forEach(
        (path, d) -> {
          Difference listed = intended.get(path);
          if (listed == null
              && d.akri().equals(ABSENT)
              && prefixEntry(intended, path).isPresent()) {
            return;
          }
          if (listed == null) {
            problems.add(
                "unlisted difference " + path + ": Akri " + d.akri() + ", jakri " + d.jakri());
          } else if (!listed.akri().equals(d.akri()) || !listed.jakri().equals(d.jakri())) {
            problems.add(
                "difference "
                    + path
                    + " is now Akri "
                    + d.akri()
                    + ", jakri "
                    + d.jakri()
                    + " but listed as Akri "
                    + listed.akri()
                    + ", jakri "
                    + listed.jakri());
          }
        });
    intended.keySet().stream()
        .filter(
            path ->
                path.endsWith("*")
                    ? actual.keySet().stream()
                        .noneMatch(p -> p.startsWith(path.substring(0, path.length() - 1)))
                    : !actual.containsKey(path))
        .forEach(path -> problems.add("listed difference " + path + " is gone: remove it"));
    if (!problems.isEmpty()) {
      fail(crdName + " vs Akri's:\n  " + String.join("\n  ", problems));
    }
  }

  private static java.util.Optional<String> prefixEntry(
      Map<String, Difference> intended, String path) {
    return intended.keySet().stream()
        .filter(p -> p.endsWith("*") && path.startsWith(p.substring(0, p.length() - 1)))
        .findFirst();
  }

  static Map<String, Difference> differences(Map<String, String> akri, Map<String, String> jakri) {
    Set<String> paths = new TreeSet<>(akri.keySet());
    paths.addAll(jakri.keySet());
    Map<String, Difference> out = new TreeMap<>();
    for (String path : paths) {
      String a = akri.getOrDefault(path, ABSENT);
      String j = jakri.getOrDefault(path, ABSENT);
      if (!Objects.equals(a, j)) {
        out.put(path, new Difference(a, j, ""));
      }
    }
    return out;
  }

  static JsonNode akri(String file) {
    try (InputStream in = AkriCrdSchemaComparisonTest.class.getResourceAsStream("akri/" + file)) {
      return CrdFiles.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The CRD as sorted {@code path -> value} entries (see the class comment). */
  static Map<String, String> flatten(JsonNode crd) {
    Map<String, String> out = new TreeMap<>();
    crdEntries("crd:", crd, out);
    return out;
  }

  private static void crdEntries(String path, JsonNode node, Map<String, String> out) {
    if (node.isObject() && node.size() > 0) {
      for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        String key = e.getKey();
        JsonNode value = e.getValue();
        if (key.equals("description")
            || (key.equals("priority") && value.isNumber() && value.asInt() == 0)) {
          continue;
        }
        if (key.equals("openAPIV3Schema")) {
          schemaEntries("schema:", value, out);
        } else if ((key.equals("versions") || key.equals("additionalPrinterColumns"))
            && value.isArray()) {
          for (JsonNode element : value) {
            crdEntries(path + key + "[" + element.path("name").asText() + "].", element, out);
          }
        } else {
          crdEntries(path + key + ".", value, out);
        }
      }
    } else {
      out.put(path.substring(0, path.length() - 1), scalar(node));
    }
  }

  private static void schemaEntries(String path, JsonNode schema, Map<String, String> out) {
    for (Iterator<Map.Entry<String, JsonNode>> it = schema.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String key = e.getKey();
      JsonNode value = e.getValue();
      switch (key) {
        case "description" -> {}
        case "properties" ->
            value
                .fields()
                .forEachRemaining(p -> schemaEntries(path + "." + p.getKey(), p.getValue(), out));
        case "items" -> schemaEntries(path + "[]", value, out);
        case "additionalProperties" -> {
          if (value.isObject()) {
            schemaEntries(path + "{*}", value, out);
          } else {
            out.put(path + "@additionalProperties", scalar(value));
          }
        }
        case "required" -> {
          List<String> names = new ArrayList<>();
          value.forEach(n -> names.add(n.asText()));
          names.sort(null);
          out.put(path + "@required", CrdFiles.YAML.valueToTree(names).toString());
        }
        default -> out.put(path + "@" + key, scalar(value));
      }
    }
  }

  private static String scalar(JsonNode node) {
    if (node.isNumber()) {
      return new BigDecimal(node.asText()).stripTrailingZeros().toPlainString();
    }
    if (node.isTextual()) {
      return node.asText();
    }
    return node.toString();
  }
}
