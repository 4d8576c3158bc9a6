package io.jakri.handler.opcua;

import java.util.List;

/**
 * One entry of a FindServers answer (OPC UA Part 4, ApplicationDescription), reduced to what
 * discovery reads.
 *
 * @param name the application name's text; empty when the server sent none
 * @param type the application type
 * @param discoveryUrls the URLs the application can be discovered at, in the server's order
 */
public record Application(String name, Type type, List<String> discoveryUrls) {

  /** OPC UA's ApplicationType. */
  public enum Type {
    SERVER,
    CLIENT,
    CLIENT_AND_SERVER,
    DISCOVERY_SERVER,
    /** A value OPC UA does not define. */
    UNKNOWN
  }

  public Application {
    name = name == null ? "" : name;
    type = type == null ? Type.UNKNOWN : type;
    discoveryUrls =
        discoveryUrls == null
            ? List.of()
            : discoveryUrls.stream().map(u -> u == null ? "" : u).toList();
  }
}
