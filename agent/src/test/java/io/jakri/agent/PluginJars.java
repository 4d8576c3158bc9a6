package io.jakri.agent;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

/** Builds PF4J plugin jars at test time from compiled test classes (no binaries committed). */
public final class PluginJars {

  private static final Path TEST_CLASSES = Path.of("target", "test-classes");

  private PluginJars() {}

  /**
   * Writes a plugin jar with the given manifest entries, whose {@code extensions.idx} lists {@code
   * extensions}; each class (and its nested classes) is copied from the test classes.
   */
  public static Path build(
      Path jar, String pluginId, String requires, List<Class<?>> extensions, boolean manifest)
      throws IOException {
    Manifest mf = new Manifest();
    mf.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    if (manifest) {
      mf.getMainAttributes().putValue("Plugin-Id", pluginId);
      mf.getMainAttributes().putValue("Plugin-Version", "0.1.0");
      mf.getMainAttributes().putValue("Plugin-Requires", requires);
    }
    try (OutputStream file = Files.newOutputStream(jar);
        JarOutputStream out =
            manifest ? new JarOutputStream(file, mf) : new JarOutputStream(file)) {
      StringBuilder index = new StringBuilder();
      java.util.Set<String> written = new java.util.HashSet<>();
      for (Class<?> extension : extensions) {
        index.append(extension.getName()).append('\n');
        Class<?> top = extension;
        while (top.getEnclosingClass() != null) {
          top = top.getEnclosingClass();
        }
        String prefix = top.getName().replace('.', '/');
        Path dir = TEST_CLASSES.resolve(prefix).getParent();
        String simple = prefix.substring(prefix.lastIndexOf('/') + 1);
        try (var files = Files.list(dir)) {
          for (Path cls : files.toList()) {
            String name = cls.getFileName().toString();
            if ((name.equals(simple + ".class") || name.startsWith(simple + "$"))
                && written.add(name)) {
              out.putNextEntry(
                  new JarEntry(prefix.substring(0, prefix.lastIndexOf('/') + 1) + name));
              out.write(Files.readAllBytes(cls));
              out.closeEntry();
            }
          }
        }
      }
      out.putNextEntry(new JarEntry("META-INF/extensions.idx"));
      out.write(index.toString().getBytes(StandardCharsets.UTF_8));
      out.closeEntry();
    }
    return jar;
  }
}
