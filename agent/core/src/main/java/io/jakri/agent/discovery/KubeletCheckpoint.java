package io.jakri.agent.discovery;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The resources other device plugins registered with the kubelet, as its checkpoint {@code
 * kubelet_internal_checkpoint} in the device-plugin directory records them ({@code
 * Data.RegisteredDevices}: resource name to device ids). Read only, and again only when the file
 * changed. A resource counts as another plugin's when one of its device ids is not shaped like the
 * agent's own slot ids ({@code <configuration>-<6 hex>-<n>}); a resource with no devices is not
 * counted (it cannot be told apart from one this agent served before a restart). Thread-safe.
 */
public final class KubeletCheckpoint {

  /** The kubelet's checkpoint file name. */
  public static final String FILE = "kubelet_internal_checkpoint";

  /** Largest checkpoint read (a node's checkpoint is a few KB to a few MB). */
  private static final long MAX_BYTES = 64L << 20;

  private static final Logger LOG = LoggerFactory.getLogger(KubeletCheckpoint.class);
  private static final Pattern OWN_DEVICE_ID =
      Pattern.compile("[a-z0-9]([-a-z0-9.]*[a-z0-9])?-[0-9a-f]{6}-[0-9]+");

  private final Path file;
  private Object stamp;
  private Set<String> foreign = Set.of();

  public KubeletCheckpoint(Path devicePluginDir) {
    this.file = devicePluginDir.resolve(FILE);
  }

  /** Resource names registered by device plugins other than this agent. */
  public synchronized Set<String> foreignResources() {
    BasicFileAttributes attributes;
    try {
      attributes = Files.readAttributes(file, BasicFileAttributes.class);
    } catch (NoSuchFileException e) {
      stamp = null;
      foreign = Set.of();
      return foreign;
    } catch (IOException e) {
      return foreign;
    }
    Object now = List.of(attributes.lastModifiedTime(), attributes.size(), attributes.fileKey());
    if (now.equals(stamp)) {
      return foreign;
    }
    stamp = now;
    if (attributes.size() > MAX_BYTES) {
      LOG.warn("{}: larger than {} bytes; not read", file, MAX_BYTES);
      foreign = Set.of();
      return foreign;
    }
    try {
      foreign = parse(Files.readString(file));
    } catch (IOException | RuntimeException e) {
      LOG.warn("{}: cannot be read: {}", file, e.toString());
      foreign = Set.of();
    }
    return foreign;
  }

  /** The foreign resources of a checkpoint's JSON text. */
  static Set<String> parse(String json) throws IOException {
    JsonNode registered = new ObjectMapper().readTree(json).path("Data").path("RegisteredDevices");
    Set<String> result = new TreeSet<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = registered.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      List<String> ids = new ArrayList<>();
      e.getValue().forEach(id -> ids.add(id.asText()));
      if (ids.stream().anyMatch(id -> !OWN_DEVICE_ID.matcher(id).matches())) {
        result.add(e.getKey());
      }
    }
    return result;
  }

  public Path file() {
    return file;
  }
}
