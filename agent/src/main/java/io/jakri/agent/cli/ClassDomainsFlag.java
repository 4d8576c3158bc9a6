package io.jakri.agent.cli;

import io.jakri.agent.Safeguards;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Option;

/** {@code --class-domains}, shared by the agent and {@code validate}. */
final class ClassDomainsFlag {
  @Option(
      names = "--class-domains",
      split = ",",
      description =
          "Domains a handler's class resource may be in, comma-separated, exact match (env"
              + " JAKRI_CLASS_DOMAINS; default ${DEFAULT-VALUE}). akri.sh/<configuration> is"
              + " always allowed; an empty value allows no other.")
  List<String> domains = List.copyOf(Safeguards.DEFAULT_CLASS_DOMAINS);

  java.util.Set<String> domains() {
    java.util.Set<String> result = new java.util.TreeSet<>();
    for (String d : domains == null ? List.<String>of() : domains) {
      if (!d.isBlank()) {
        result.add(d.strip().toLowerCase(Locale.ROOT));
      }
    }
    return result;
  }
}
