package io.jakri.agent;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

/**
 * Writes PF4J plugin jars at test time from compiled test classes, and arbitrary hostile jars
 * (entries with chosen names and bytes). No binaries are committed.
 */
public final class PluginJars {

  private static final Path TEST_CLASSES = Path.of("target", "test-classes").toAbsolutePath();

  private PluginJars() {}

  /** {@link #build} with a manifest. */
  public static Path plugin(Path jar, String pluginId, String requires, List<Class<?>> extensions)
      throws IOException {
    return build(jar, pluginId, requires, extensions, true);
  }

  /**
   * Writes a plugin jar with the given manifest entries (none at all, not even a manifest, when
   * {@code manifest} is false), whose {@code extensions.idx} lists {@code extensions}; each class's
   * top-level class and all its nested classes are copied from the test classes.
   */
  public static Path build(
      Path jar, String pluginId, String requires, List<Class<?>> extensions, boolean manifest)
      throws IOException {
    Map<String, byte[]> entries = new LinkedHashMap<>();
    StringBuilder index = new StringBuilder();
    for (Class<?> extension : extensions) {
      index.append(extension.getName()).append('\n');
      Class<?> top = extension;
      while (top.getEnclosingClass() != null) {
        top = top.getEnclosingClass();
      }
      String path = top.getName().replace('.', '/');
      Path dir = TEST_CLASSES.resolve(path).getParent();
      String simple = path.substring(path.lastIndexOf('/') + 1);
      try (var files = Files.list(dir)) {
        for (Path cls : files.toList()) {
          String name = cls.getFileName().toString();
          if (name.equals(simple + ".class") || name.startsWith(simple + "$")) {
            entries.put(
                path.substring(0, path.lastIndexOf('/') + 1) + name, Files.readAllBytes(cls));
          }
        }
      }
    }
    entries.put("META-INF/extensions.idx", index.toString().getBytes(StandardCharsets.UTF_8));
    return write(
        jar,
        manifest
            ? Optional.of(
                Map.of(
                    "Plugin-Id", pluginId, "Plugin-Version", "0.1.0", "Plugin-Requires", requires))
            : Optional.empty(),
        entries);
  }

  /** A jar with the given manifest attributes and entries, written as-is. */
  public static Path jar(Path jar, Map<String, String> manifest, Map<String, byte[]> entries)
      throws IOException {
    return write(jar, Optional.of(manifest), entries);
  }

  private static Path write(
      Path jar, Optional<Map<String, String>> manifest, Map<String, byte[]> entries)
      throws IOException {
    try (OutputStream file = Files.newOutputStream(jar);
        JarOutputStream out =
            manifest.isPresent()
                ? new JarOutputStream(file, manifestOf(manifest.get()))
                : new JarOutputStream(file)) {
      for (Map.Entry<String, byte[]> e : entries.entrySet()) {
        out.putNextEntry(new JarEntry(e.getKey()));
        out.write(e.getValue());
        out.closeEntry();
      }
    }
    return jar;
  }

  private static Manifest manifestOf(Map<String, String> attributes) {
    Manifest mf = new Manifest();
    mf.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    attributes.forEach(mf.getMainAttributes()::putValue);
    return mf;
  }
}
