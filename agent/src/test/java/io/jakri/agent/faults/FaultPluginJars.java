package io.jakri.agent.faults;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

/**
 * Writes PF4J plugin jars at test time from compiled test classes, and arbitrary hostile jars
 * (entries with chosen names and bytes). No binaries are committed.
 */
final class FaultPluginJars {

  static final Path TEST_CLASSES = Path.of("target", "test-classes").toAbsolutePath();

  private FaultPluginJars() {}

  /** A plugin jar whose extensions.idx lists {@code extensions} (top-level class + nested ones). */
  static Path plugin(Path jar, String id, String requires, List<Class<?>> extensions)
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
    return jar(
        jar,
        Map.of("Plugin-Id", id, "Plugin-Version", "0.1.0", "Plugin-Requires", requires),
        entries);
  }

  /** A jar with the given manifest attributes and entries, written as-is. */
  static Path jar(Path jar, Map<String, String> manifest, Map<String, byte[]> entries)
      throws IOException {
    Manifest mf = new Manifest();
    mf.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    manifest.forEach(mf.getMainAttributes()::putValue);
    try (OutputStream file = Files.newOutputStream(jar);
        JarOutputStream out = new JarOutputStream(file, mf)) {
      for (Map.Entry<String, byte[]> e : entries.entrySet()) {
        out.putNextEntry(new JarEntry(e.getKey()));
        out.write(e.getValue());
        out.closeEntry();
      }
    }
    return jar;
  }
}
