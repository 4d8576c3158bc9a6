package io.jakri.agent.discovery;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.List;
import java.util.Optional;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;

/**
 * Checks a plugin jar before PF4J sees it: entry names that would escape a directory if extracted
 * (absolute, {@code ..}, backslashes, NUL), classes in the agent's, the handler API's or PF4J's own
 * packages (a plugin's class loader looks in the plugin first, so such a class would shadow the
 * agent's inside the plugin and break or subvert the contract), and a Plugin-Id that is not a plain
 * name. Stateless and thread-safe.
 */
final class PluginJarCheck {

  /** Package trees only the agent and its platform may define; entries are jar paths. */
  private static final List<String> RESERVED_PREFIXES =
      List.of(
          "io/jakri/agent/allocation/",
          "io/jakri/agent/cdi/",
          "io/jakri/agent/cli/",
          "io/jakri/agent/cluster/",
          "io/jakri/agent/configuration/",
          "io/jakri/agent/controlplane/",
          "io/jakri/agent/demo/",
          "io/jakri/agent/deviceplugin/",
          "io/jakri/agent/discovery/",
          "io/jakri/agent/dra/",
          "io/jakri/agent/events/",
          "io/jakri/agent/external/",
          "io/jakri/agent/instance/",
          "io/jakri/agent/model/",
          "io/jakri/agent/reclaim/",
          "io/jakri/agent/validate/",
          "io/jakri/kubelet/",
          "io/jakri/crd/",
          "org/pf4j/",
          "java/",
          "javax/",
          "jdk/");

  /**
   * Packages whose own classes belong to the agent or the handler API, while their sub-packages may
   * belong to plugins ({@code io.jakri.handler.zeroconf}, test plugins under {@code
   * io.jakri.agent}).
   */
  private static final List<String> RESERVED_PACKAGES =
      List.of("io/jakri/agent/", "io/jakri/handler/");

  private static final Pattern PLUGIN_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");

  /** Most entries read from one jar. */
  private static final int MAX_ENTRIES = 100_000;

  private PluginJarCheck() {}

  /** Why the jar must not be loaded, or empty when it may be handed to PF4J. */
  static Optional<String> problem(Path jar) {
    try (JarFile file = new JarFile(jar.toFile(), false)) {
      Manifest manifest = file.getManifest();
      if (manifest == null) {
        return Optional.of(
            "not a handler plugin: it has no META-INF/MANIFEST.MF (build it with the"
                + " jakri-handlers-parent POM, which writes Plugin-Id and Plugin-Version)");
      }
      {
        String id = manifest.getMainAttributes().getValue("Plugin-Id");
        if (id == null || id.isBlank()) {
          return Optional.of(
              "not a handler plugin: its manifest has no Plugin-Id (build it with the"
                  + " jakri-handlers-parent POM, or set Plugin-Id and Plugin-Version)");
        }
        if (!PLUGIN_ID.matcher(id).matches()) {
          return Optional.of(
              "Plugin-Id \""
                  + printable(id)
                  + "\" is not a plain name (letters, digits, '.', '_', '-'; at most 63)");
        }
      }
      int count = 0;
      Enumeration<? extends ZipEntry> entries = file.entries();
      while (entries.hasMoreElements()) {
        if (++count > MAX_ENTRIES) {
          return Optional.of("more than " + MAX_ENTRIES + " entries");
        }
        String name = entries.nextElement().getName();
        if (escapes(name)) {
          return Optional.of("entry \"" + printable(name) + "\" would escape its directory");
        }
        Optional<String> reserved = reserved(name);
        if (reserved.isPresent()) {
          return Optional.of(
              "entry \""
                  + printable(name)
                  + "\" defines a class in "
                  + reserved.get()
                  + ", which only the agent may define");
        }
      }
      return Optional.empty();
    } catch (IOException | SecurityException | IllegalStateException e) {
      // PF4J would log its own stack trace and then say "No PluginDescriptorFinder".
      return Optional.of(
          "not a readable jar (zip) file"
              + (e.getMessage() == null ? "" : ": " + printable(e.getMessage())));
    }
  }

  /** The jar's {@code Plugin-Id}, when it has a readable one. */
  static Optional<String> pluginId(Path jar) {
    try (JarFile file = new JarFile(jar.toFile(), false)) {
      Manifest manifest = file.getManifest();
      return Optional.ofNullable(
              manifest == null ? null : manifest.getMainAttributes().getValue("Plugin-Id"))
          .map(String::strip)
          .filter(id -> !id.isEmpty());
    } catch (IOException | SecurityException | IllegalStateException e) {
      return Optional.empty();
    }
  }

  private static boolean escapes(String name) {
    if (name.startsWith("/") || name.indexOf('\\') >= 0 || name.indexOf('\0') >= 0) {
      return true;
    }
    if (name.length() > 1 && name.charAt(1) == ':') {
      return true; // a Windows drive
    }
    for (String part : name.split("/", -1)) {
      if (part.equals("..")) {
        return true;
      }
    }
    return false;
  }

  private static Optional<String> reserved(String name) {
    if (!name.endsWith(".class")) {
      return Optional.empty();
    }
    for (String prefix : RESERVED_PREFIXES) {
      if (name.startsWith(prefix)) {
        return Optional.of("package " + prefix.replace('/', '.') + "*");
      }
    }
    for (String pkg : RESERVED_PACKAGES) {
      if (name.startsWith(pkg) && name.indexOf('/', pkg.length()) < 0) {
        String dotted = pkg.substring(0, pkg.length() - 1).replace('/', '.');
        return Optional.of(
            dotted.equals("io.jakri.handler")
                ? "the handler API package io.jakri.handler"
                : "package " + dotted);
      }
    }
    return Optional.empty();
  }

  private static String printable(String text) {
    StringBuilder out = new StringBuilder();
    text.codePoints()
        .limit(200)
        .forEach(
            c -> {
              if (c < 0x20 || c == 0x7f) {
                out.append(String.format("\\x%02x", c));
              } else {
                out.appendCodePoint(c);
              }
            });
    return out.toString();
  }
}
