package io.jakri.handler.opcua;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Akri's rules for turning one FindServers answer into device URLs, as a pure function.
 *
 * <ol>
 *   <li>Only applications of type Server are devices (a discovery server, a client or a
 *       client-and-server never is).
 *   <li>The application name must pass the {@link ApplicationNameFilter}.
 *   <li>The device URL is the application's first discovery URL that starts with {@code opc.tcp};
 *       an application without one is skipped.
 *   <li>When that URL's host does not resolve, the discovery server's host takes its place (the
 *       server's port and path stay); otherwise the URL is used exactly as the server sent it.
 *   <li>Repeated URLs count once, in the order of the answer.
 * </ol>
 *
 * Bounded for hostile answers: at most {@code maxServers} URLs are kept and at most {@code
 * maxLookups} distinct host names are looked up per answer; URLs that are not usable as an id and
 * an environment variable (see {@link OpcTcpUrl}) are skipped and counted.
 *
 * @param servers the device URLs, distinct, in answer order
 * @param applications how many applications the answer held
 * @param notServers how many were not of type Server
 * @param filteredOut how many Servers the name filter refused
 * @param unusable how many Servers had no usable opc.tcp URL, or were past a limit
 * @param examples up to three reasons for skipped Servers, printable, for the log
 */
public record ServerSelection(
    List<OpcTcpUrl> servers,
    int applications,
    int notServers,
    int filteredOut,
    int unusable,
    List<String> examples) {

  private static final int MAX_EXAMPLES = 3;

  public ServerSelection {
    servers = List.copyOf(servers);
    examples = List.copyOf(examples);
  }

  /** Applies the rules to one answer from {@code discoveryServer}. Pure apart from DNS lookups. */
  public static ServerSelection select(
      OpcTcpUrl discoveryServer,
      List<Application> answer,
      ApplicationNameFilter filter,
      HostResolver resolver,
      int maxServers,
      int maxLookups) {
    Set<String> seen = new LinkedHashSet<>();
    List<OpcTcpUrl> servers = new ArrayList<>();
    Map<String, Boolean> resolved = new HashMap<>();
    List<String> examples = new ArrayList<>();
    int notServers = 0;
    int filteredOut = 0;
    int unusable = 0;
    for (Application app : answer) {
      if (app.type() != Application.Type.SERVER) {
        notServers++;
        continue;
      }
      if (!filter.admits(app.name())) {
        filteredOut++;
        continue;
      }
      Optional<String> first =
          app.discoveryUrls().stream().filter(u -> u.startsWith(OpcTcpUrl.SCHEME)).findFirst();
      if (first.isEmpty()) {
        unusable++;
        example(examples, app, "no opc.tcp discovery URL");
        continue;
      }
      OpcTcpUrl.Result parsed = OpcTcpUrl.parse(first.get());
      if (parsed.url().isEmpty()) {
        unusable++;
        example(examples, app, "URL \"" + Printable.of(first.get()) + "\": " + parsed.problem());
        continue;
      }
      OpcTcpUrl url = parsed.url().get();
      Boolean resolves = resolved.get(url.host());
      if (resolves == null) {
        if (resolved.size() >= maxLookups) {
          unusable++;
          example(examples, app, "more than " + maxLookups + " host names in one answer");
          continue;
        }
        resolves = resolver.resolves(url.host());
        resolved.put(url.host(), resolves);
      }
      OpcTcpUrl device = resolves ? url : url.withHost(discoveryServer.host());
      if (!seen.add(device.text())) {
        continue;
      }
      if (servers.size() >= maxServers) {
        unusable++;
        example(examples, app, "more than " + maxServers + " servers in one answer");
        continue;
      }
      servers.add(device);
    }
    return new ServerSelection(servers, answer.size(), notServers, filteredOut, unusable, examples);
  }

  private static void example(List<String> examples, Application app, String reason) {
    if (examples.size() < MAX_EXAMPLES) {
      examples.add("\"" + Printable.of(app.name()) + "\": " + reason);
    }
  }
}
