package io.jakri.agent.external;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Objects;
import java.util.regex.Pattern;
import v0.Discovery.RegisterDiscoveryHandlerRequest;

/**
 * One registered endpoint of an external discovery handler (Akri's {@code
 * RegisterDiscoveryHandlerRequest}, checked).
 *
 * @param name the handler name Configurations use
 * @param endpoint a Unix socket path inside the discovery-handlers directory, or {@code
 *     http://host:port}
 * @param type how {@code endpoint} is reached
 * @param shared whether other nodes see the same devices (decides the Instance names)
 */
public record ExternalEndpoint(String name, String endpoint, Type type, boolean shared) {

  /** Longest handler name accepted. */
  public static final int MAX_NAME_LENGTH = 63;

  /** Longest endpoint accepted. */
  public static final int MAX_ENDPOINT_LENGTH = 1024;

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?");
  private static final int S_IFMT = 0170000;
  private static final int S_IFSOCK = 0140000;

  /** Akri's endpoint types. */
  public enum Type {
    UDS,
    NETWORK
  }

  public ExternalEndpoint {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(endpoint, "endpoint");
    Objects.requireNonNull(type, "type");
  }

  /** Akri's identity of an endpoint: one per name and endpoint. */
  public String key() {
    return name + "@" + endpoint;
  }

  /** A checked registration: accepted, or refused with the rule it broke. */
  public sealed interface Checked permits Accepted, Refused {}

  /** The registration is acceptable. */
  public record Accepted(ExternalEndpoint endpoint) implements Checked {}

  /** The registration is refused; {@code reason} names the field and the rule. */
  public record Refused(String reason) implements Checked {}

  /**
   * Checks a registration: the name is a DNS-label-like word of at most {@value #MAX_NAME_LENGTH}
   * characters; a UDS endpoint is an absolute path inside {@code directory} that is a Unix socket
   * now ({@code requireSocket}); a NETWORK endpoint is {@code http://host:port}.
   */
  public static Checked check(
      RegisterDiscoveryHandlerRequest request, Path directory, boolean requireSocket) {
    String name = request.getName();
    if (name.isEmpty()) {
      return new Refused("name is empty");
    }
    if (name.length() > MAX_NAME_LENGTH || !NAME.matcher(name).matches()) {
      return new Refused(
          "name \""
              + shorten(name)
              + "\" is not a handler name (letters, digits, '.', '_', '-', at most "
              + MAX_NAME_LENGTH
              + " characters, starting and ending with a letter or digit)");
    }
    String endpoint = request.getEndpoint();
    if (endpoint.isEmpty()) {
      return new Refused("endpoint is empty");
    }
    if (endpoint.length() > MAX_ENDPOINT_LENGTH) {
      return new Refused("endpoint is longer than " + MAX_ENDPOINT_LENGTH + " characters");
    }
    if (endpoint.indexOf('\0') >= 0) {
      // Linux's abstract-namespace sockets start with a NUL; they have no path, so no owner-only
      // directory guards them, and no path the agent could check.
      return new Refused(
          "endpoint \""
              + shorten(endpoint)
              + "\" contains a NUL character (an abstract-namespace socket?); it must be a socket"
              + " path inside the discovery-handlers directory");
    }
    return switch (request.getEndpointType()) {
      case UDS -> checkUds(request, directory, requireSocket);
      case NETWORK -> checkNetwork(request);
      default ->
          new Refused(
              "endpoint_type " + request.getEndpointTypeValue() + " is neither UDS nor NETWORK");
    };
  }

  private static Checked checkUds(
      RegisterDiscoveryHandlerRequest request, Path directory, boolean requireSocket) {
    String endpoint = request.getEndpoint();
    Path path;
    try {
      path = Path.of(endpoint);
    } catch (RuntimeException e) {
      return new Refused("endpoint \"" + shorten(endpoint) + "\" is not a path");
    }
    Path dir = directory.toAbsolutePath().normalize();
    if (!path.isAbsolute()
        || !path.normalize().equals(path)
        || !path.startsWith(dir)
        || path.equals(dir)) {
      return new Refused(
          "endpoint \""
              + shorten(endpoint)
              + "\" is not a socket path inside the discovery-handlers directory "
              + dir);
    }
    if (requireSocket) {
      try {
        Object mode = Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        if (!(mode instanceof Integer m) || (m & S_IFMT) != S_IFSOCK) {
          return new Refused("endpoint " + endpoint + " is not a Unix socket");
        }
      } catch (IOException | UnsupportedOperationException e) {
        return new Refused("endpoint " + endpoint + " does not exist");
      }
    }
    return new Accepted(
        new ExternalEndpoint(request.getName(), endpoint, Type.UDS, request.getShared()));
  }

  private static Checked checkNetwork(RegisterDiscoveryHandlerRequest request) {
    String endpoint = request.getEndpoint();
    String rule = "endpoint \"" + shorten(endpoint) + "\" is not http://host:port";
    URI uri;
    try {
      uri = new URI(endpoint);
    } catch (URISyntaxException e) {
      return new Refused(rule);
    }
    if (!"http".equals(uri.getScheme())
        || uri.getHost() == null
        || uri.getHost().isEmpty()
        || uri.getPort() < 1
        || uri.getPort() > 65535
        || uri.getRawUserInfo() != null
        || (uri.getRawPath() != null
            && !uri.getRawPath().isEmpty()
            && !uri.getRawPath().equals("/"))
        || uri.getRawQuery() != null
        || uri.getRawFragment() != null) {
      return new Refused(rule);
    }
    return new Accepted(
        new ExternalEndpoint(request.getName(), endpoint, Type.NETWORK, request.getShared()));
  }

  /** Host of a NETWORK endpoint (brackets of an IPv6 literal removed). */
  String host() {
    String host = URI.create(endpoint).getHost();
    return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
  }

  /** Port of a NETWORK endpoint. */
  int port() {
    return URI.create(endpoint).getPort();
  }

  /** The request that registers this endpoint (for the registrations file and tests). */
  public RegisterDiscoveryHandlerRequest toRequest() {
    return RegisterDiscoveryHandlerRequest.newBuilder()
        .setName(name)
        .setEndpoint(endpoint)
        .setEndpointType(
            type == Type.UDS
                ? RegisterDiscoveryHandlerRequest.EndpointType.UDS
                : RegisterDiscoveryHandlerRequest.EndpointType.NETWORK)
        .setShared(shared)
        .build();
  }

  static String shorten(String s) {
    String printable = s.replaceAll("\\p{Cntrl}", "?");
    return printable.length() > 80 ? printable.substring(0, 80) + "..." : printable;
  }
}
