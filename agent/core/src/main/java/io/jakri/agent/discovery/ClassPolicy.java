package io.jakri.agent.discovery;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * Which class resources a Configuration's devices may join (DESIGN §4), so that no Configuration
 * takes over a resource it does not own: a class must be a valid extended resource name, in the
 * {@code akri.sh} domain only as the Configuration's own {@code akri.sh/<configuration>}, else in a
 * domain the operator allows ({@code --class-domains}), not served by another Configuration on this
 * node, and not registered with the kubelet by another device plugin. Thread-safe.
 */
public final class ClassPolicy {

  private static final Pattern DOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");

  private final Set<String> domains;
  private final Supplier<Set<String>> foreign;

  /**
   * @param domains the allowed domains (exact match)
   * @param foreign resource names other device plugins registered with the kubelet
   */
  public ClassPolicy(Set<String> domains, Supplier<Set<String>> foreign) {
    this.domains = Set.copyOf(domains);
    this.foreign = foreign;
  }

  /** The default domains and no knowledge of other device plugins. */
  public static ClassPolicy defaults() {
    return new ClassPolicy(Set.of("example.com"), Set::of);
  }

  public Set<String> domains() {
    return domains;
  }

  /**
   * Why {@code configuration} may not put devices into {@code className}, if it may not.
   *
   * @param owners class resources other Configurations on this node serve, with their names
   * @param servedHere whether this agent serves {@code className} now (then the kubelet's record of
   *     it may be this agent's own)
   */
  public Optional<String> refusal(
      String configuration, String className, Map<String, String> owners, boolean servedHere) {
    Optional<String> rule = nameRule(configuration, className, domains);
    if (rule.isPresent()) {
      return rule;
    }
    String owner = owners.get(className);
    if (owner != null && !owner.equals(configuration)) {
      return Optional.of(
          "class "
              + className
              + " is served by Configuration "
              + owner
              + " on this node; a class belongs to one Configuration");
    }
    if (!servedHere && foreign.get().contains(className)) {
      return Optional.of(
          "class "
              + className
              + " is registered with the kubelet by another device plugin on this node;"
              + " registering it would replace that plugin");
    }
    return Optional.empty();
  }

  /** Whether {@code className} is a valid extended resource name. */
  public static boolean validName(String className) {
    int slash = className.indexOf('/');
    if (slash < 0) {
      return false;
    }
    String domain = className.substring(0, slash);
    String name = className.substring(slash + 1);
    return domain.length() <= 253
        && DOMAIN.matcher(domain).matches()
        && name.length() <= 63
        && NAME.matcher(name).matches();
  }

  /**
   * The static rules alone (name, {@code akri.sh} domain, allowed domains), also used by {@code
   * validate}.
   */
  public static Optional<String> nameRule(
      String configuration, String className, Set<String> domains) {
    if (!validName(className)) {
      return Optional.of(
          "class \""
              + className
              + "\" is not a valid extended resource name (<lowercase DNS subdomain>/<name>)");
    }
    String domain = className.substring(0, className.indexOf('/'));
    String own = "akri.sh/" + configuration;
    if (domain.equals("akri.sh")) {
      return className.equals(own)
          ? Optional.empty()
          : Optional.of(
              "class "
                  + className
                  + " is in the agent's own domain akri.sh, where a Configuration's devices may"
                  + " only join "
                  + own);
    }
    if (domain.equals("kubernetes.io") || domain.endsWith(".kubernetes.io")) {
      return Optional.of("class " + className + " is in the reserved domain " + domain);
    }
    if (!domains.contains(domain)) {
      return Optional.of(
          "class "
              + className
              + " is not in a domain this agent allows ("
              + (domains.isEmpty() ? "none" : String.join(", ", new java.util.TreeSet<>(domains)))
              + "; see --class-domains)");
    }
    return Optional.empty();
  }
}
