package io.jakri.charts;

import com.marcnuri.helm.Helm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * Builds the chart's distribution: a Helm chart repository ({@code <repo>/<name>-<version>.tgz}
 * from Helm's own package command, and the {@code index.yaml} that {@code helm repo index} would
 * write for it) and an OCI image layout of the chart ({@code oci-layout}, {@code index.json},
 * {@code blobs/sha256/...}: a manifest with Helm's chart config and content media types, as {@code
 * helm push} uploads it), ready for any static web host or OCI registry.
 *
 * <p>Run by the {@code charts} module at {@code package}: {@code ChartRepository <chart dir> <repo
 * dir> <oci dir>}.
 */
public final class ChartRepository {

  static final String CONFIG_MEDIA_TYPE = "application/vnd.cncf.helm.config.v1+json";
  static final String CHART_MEDIA_TYPE = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
  static final String MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json";

  /** Chart.yaml fields in the order Helm's chart metadata serializes them (OCI config blob). */
  static final List<String> METADATA_FIELDS =
      List.of(
          "name",
          "home",
          "sources",
          "version",
          "description",
          "keywords",
          "maintainers",
          "icon",
          "apiVersion",
          "condition",
          "tags",
          "appVersion",
          "deprecated",
          "annotations",
          "kubeVersion",
          "dependencies",
          "type");

  private ChartRepository() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 3) {
      throw new IllegalArgumentException("usage: ChartRepository <chart dir> <repo dir> <oci dir>");
    }
    Path tgz = build(Path.of(args[0]), Path.of(args[1]), Path.of(args[2]), Instant.now());
    System.out.println("chart repository: " + tgz + ", index.yaml; OCI layout: " + args[2]);
  }

  /** Packages {@code chart} into {@code repo} with index.yaml, and lays it out in {@code oci}. */
  static Path build(Path chart, Path repo, Path oci, Instant created) throws IOException {
    Map<String, Object> metadata = chartMetadata(chart);
    Files.createDirectories(repo);
    Path tgz = repo.resolve(metadata.get("name") + "-" + metadata.get("version") + ".tgz");
    Files.deleteIfExists(tgz);
    new Helm(chart).packageIt().withDestination(repo).call();
    if (!Files.isRegularFile(tgz)) {
      throw new IOException("helm package wrote no " + tgz);
    }
    byte[] archive = Files.readAllBytes(tgz);
    Files.writeString(repo.resolve("index.yaml"), index(metadata, archive, created));
    writeOciLayout(oci, metadata, archive, created);
    return tgz;
  }

  static Map<String, Object> chartMetadata(Path chart) throws IOException {
    Object loaded = new Yaml().load(Files.readString(chart.resolve("Chart.yaml")));
    @SuppressWarnings("unchecked")
    Map<String, Object> metadata = new LinkedHashMap<>((Map<String, Object>) loaded);
    for (String required : List.of("apiVersion", "name", "version")) {
      if (metadata.get(required) == null) {
        throw new IOException("Chart.yaml has no " + required);
      }
    }
    // Helm reads versions as strings.
    metadata.put("version", String.valueOf(metadata.get("version")));
    if (metadata.containsKey("appVersion")) {
      metadata.put("appVersion", String.valueOf(metadata.get("appVersion")));
    }
    return metadata;
  }

  /**
   * index.yaml as {@code helm repo index} writes it for one chart: the chart's metadata plus {@code
   * created}, {@code digest} (sha256 of the archive) and {@code urls} (relative, so the directory
   * can be served from any URL).
   */
  static String index(Map<String, Object> metadata, byte[] archive, Instant created) {
    Map<String, Object> entry = new TreeMap<>(metadata);
    entry.put("created", timestamp(created));
    entry.put("digest", sha256(archive));
    entry.put("urls", List.of(metadata.get("name") + "-" + metadata.get("version") + ".tgz"));
    Map<String, Object> index = new LinkedHashMap<>();
    index.put("apiVersion", "v1");
    index.put("entries", Map.of(metadata.get("name"), List.of(entry)));
    index.put("generated", timestamp(created));
    DumperOptions options = new DumperOptions();
    options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
    options.setWidth(Integer.MAX_VALUE);
    return new Yaml(options).dump(index);
  }

  /**
   * An OCI image layout holding one manifest, tagged with the chart version: config = the chart's
   * metadata as JSON ({@link #CONFIG_MEDIA_TYPE}), one layer = the chart archive ({@link
   * #CHART_MEDIA_TYPE}), the annotations {@code helm push} sets.
   */
  static void writeOciLayout(
      Path oci, Map<String, Object> metadata, byte[] archive, Instant created) throws IOException {
    Path blobs = oci.resolve("blobs").resolve("sha256");
    if (Files.isDirectory(blobs)) { // blobs of an earlier build would be left unreferenced
      try (Stream<Path> old = Files.list(blobs)) {
        for (Path blob : old.toList()) {
          Files.delete(blob);
        }
      }
    }
    Files.createDirectories(blobs);
    byte[] config = Json.write(configOf(metadata)).getBytes(StandardCharsets.UTF_8);
    Map<String, Object> annotations = new LinkedHashMap<>();
    annotations.put("org.opencontainers.image.created", timestamp(created));
    if (metadata.get("description") != null) {
      annotations.put("org.opencontainers.image.description", metadata.get("description"));
    }
    if (metadata.get("sources") instanceof List<?> sources && !sources.isEmpty()) {
      annotations.put("org.opencontainers.image.source", sources.get(0));
    }
    annotations.put("org.opencontainers.image.title", metadata.get("name"));
    annotations.put("org.opencontainers.image.version", metadata.get("version"));
    Map<String, Object> manifest = new LinkedHashMap<>();
    manifest.put("schemaVersion", 2);
    manifest.put("mediaType", MANIFEST_MEDIA_TYPE);
    manifest.put("config", descriptor(CONFIG_MEDIA_TYPE, writeBlob(blobs, config), config.length));
    manifest.put(
        "layers", List.of(descriptor(CHART_MEDIA_TYPE, writeBlob(blobs, archive), archive.length)));
    manifest.put("annotations", annotations);
    byte[] manifestBytes = Json.write(manifest).getBytes(StandardCharsets.UTF_8);
    Map<String, Object> manifestDescriptor =
        descriptor(MANIFEST_MEDIA_TYPE, writeBlob(blobs, manifestBytes), manifestBytes.length);
    manifestDescriptor.put(
        "annotations", Map.of("org.opencontainers.image.ref.name", metadata.get("version")));
    Map<String, Object> index = new LinkedHashMap<>();
    index.put("schemaVersion", 2);
    index.put("mediaType", "application/vnd.oci.image.index.v1+json");
    index.put("manifests", List.of(manifestDescriptor));
    Files.writeString(oci.resolve("index.json"), Json.write(index));
    Files.writeString(oci.resolve("oci-layout"), "{\"imageLayoutVersion\":\"1.0.0\"}");
  }

  /** The chart's metadata in Helm's field order, empty fields left out. */
  static Map<String, Object> configOf(Map<String, Object> metadata) {
    Map<String, Object> config = new LinkedHashMap<>();
    for (String field : METADATA_FIELDS) {
      Object value = metadata.get(field);
      if (value != null && !"".equals(value)) {
        config.put(field, value);
      }
    }
    return config;
  }

  private static Map<String, Object> descriptor(String mediaType, String digest, long size) {
    Map<String, Object> d = new LinkedHashMap<>();
    d.put("mediaType", mediaType);
    d.put("digest", digest);
    d.put("size", size);
    return d;
  }

  private static String writeBlob(Path blobs, byte[] content) throws IOException {
    String hex = sha256(content);
    Files.write(blobs.resolve(hex), content);
    return "sha256:" + hex;
  }

  static String sha256(byte[] content) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String timestamp(Instant instant) {
    return DateTimeFormatter.ISO_INSTANT.format(instant);
  }

  /** Compact JSON of maps, lists, strings, numbers and booleans. */
  static final class Json {
    private Json() {}

    static String write(Object value) {
      StringBuilder out = new StringBuilder();
      write(value, out);
      return out.toString();
    }

    private static void write(Object value, StringBuilder out) {
      if (value == null) {
        out.append("null");
      } else if (value instanceof Map<?, ?> map) {
        out.append('{');
        List<String> parts = new ArrayList<>();
        map.forEach(
            (k, v) -> {
              StringBuilder part = new StringBuilder();
              string(String.valueOf(k), part);
              part.append(':');
              write(v, part);
              parts.add(part.toString());
            });
        out.append(String.join(",", parts)).append('}');
      } else if (value instanceof List<?> list) {
        out.append('[');
        for (int i = 0; i < list.size(); i++) {
          if (i > 0) {
            out.append(',');
          }
          write(list.get(i), out);
        }
        out.append(']');
      } else if (value instanceof Number || value instanceof Boolean) {
        out.append(value);
      } else {
        string(String.valueOf(value), out);
      }
    }

    private static void string(String s, StringBuilder out) {
      out.append('"');
      for (char c : s.toCharArray()) {
        switch (c) {
          case '"' -> out.append("\\\"");
          case '\\' -> out.append("\\\\");
          case '\n' -> out.append("\\n");
          case '\r' -> out.append("\\r");
          case '\t' -> out.append("\\t");
          default -> {
            if (c < 0x20) {
              out.append(String.format("\\u%04x", (int) c));
            } else {
              out.append(c);
            }
          }
        }
      }
      out.append('"');
    }
  }
}
