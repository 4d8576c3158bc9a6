package io.jakri.controller.objects;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.regex.Pattern;

/**
 * One entry of {@code --instance-object-resources}: a resource the operator allows the controller
 * to create per Instance, named as RBAC and {@code kubectl get} name it: {@code resource[.group]}
 * ({@code configmaps}, {@code deployments.apps}, {@code widgets.example.com}; no group is the core
 * group).
 */
public record AllowedResource(String resource, String group) {

  private static final Pattern NAME =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  /**
   * Parses a comma-separated list; blanks are skipped, duplicates dropped.
   *
   * @throws IllegalArgumentException naming the first entry that is not {@code resource[.group]}
   */
  public static List<AllowedResource> parseList(String text) {
    LinkedHashSet<AllowedResource> out = new LinkedHashSet<>();
    for (String raw : text.split(",")) {
      String entry = raw.trim();
      if (entry.isEmpty()) {
        continue;
      }
      if (!NAME.matcher(entry).matches()) {
        throw new IllegalArgumentException(
            "'"
                + entry
                + "' is not resource[.group] in lower case, as RBAC names it (configmaps,"
                + " deployments.apps)");
      }
      int dot = entry.indexOf('.');
      out.add(
          dot < 0
              ? new AllowedResource(entry, "")
              : new AllowedResource(entry.substring(0, dot), entry.substring(dot + 1)));
    }
    return new ArrayList<>(out);
  }

  @Override
  public String toString() {
    return group.isEmpty() ? resource : resource + "." + group;
  }
}
