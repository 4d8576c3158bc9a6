package io.jakri.handler.opcua;

import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Pattern;

/**
 * An {@code opc.tcp://host[:port][/path]} URL, parsed strictly enough to be used as a device id and
 * an environment variable value: printable ASCII only, a host that is a DNS name, an IPv4 literal
 * or a bracketed IPv6 literal, a port between 1 and 65535 when present.
 *
 * @param text the URL exactly as given (the scheme may be in any case)
 * @param host the host without brackets
 * @param port the port, when the URL names one
 * @param rest everything after the authority: path, query and fragment, possibly empty
 */
public record OpcTcpUrl(String text, String host, OptionalInt port, String rest) {

  /** The scheme, in the case Akri compares it. */
  public static final String SCHEME = "opc.tcp";

  /** OPC UA's registered port, used when a URL names none. */
  public static final int DEFAULT_PORT = 4840;

  /** Longest URL accepted; a device id and an env var value, not a document. */
  public static final int MAX_LENGTH = 1024;

  private static final String PREFIX = SCHEME + "://";
  private static final Pattern HOST_NAME =
      Pattern.compile(
          "(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
              + "(?:\\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\\.?");
  private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]+(%[A-Za-z0-9_.-]+)?");
  private static final Pattern REST = Pattern.compile("([/?#][\\x21-\\x7E]*)?");

  /** The port to connect to: the URL's own, else {@value #DEFAULT_PORT}. */
  public int portOrDefault() {
    return port.orElse(DEFAULT_PORT);
  }

  /** The host as it appears in a URL: IPv6 literals in brackets. */
  public String hostForUrl() {
    return host.indexOf(':') >= 0 ? "[" + host + "]" : host;
  }

  /** This URL with another host, keeping scheme, port and the rest. */
  public OpcTcpUrl withHost(String newHost) {
    String bracketed = newHost.indexOf(':') >= 0 ? "[" + newHost + "]" : newHost;
    String portPart = port.isPresent() ? ":" + port.getAsInt() : "";
    return new OpcTcpUrl(PREFIX + bracketed + portPart + rest, newHost, port, rest);
  }

  /**
   * Parses a URL.
   *
   * @return the URL, or why it is not a usable opc.tcp URL (a phrase to follow "is not usable: ")
   */
  public static Result parse(String text) {
    if (text == null || text.isEmpty()) {
      return new Result(Optional.empty(), "it is empty");
    }
    if (text.length() > MAX_LENGTH) {
      return new Result(
          Optional.empty(),
          "it is longer than " + MAX_LENGTH + " characters (" + text.length() + ")");
    }
    if (!text.chars().allMatch(c -> c > 0x20 && c < 0x7F)) {
      return new Result(Optional.empty(), "it holds spaces, control or non-ASCII characters");
    }
    if (!text.toLowerCase(Locale.ROOT).startsWith(PREFIX)) {
      return new Result(Optional.empty(), "it does not start with " + PREFIX);
    }
    String afterScheme = text.substring(PREFIX.length());
    int end = afterScheme.length();
    for (int i = 0; i < afterScheme.length(); i++) {
      char c = afterScheme.charAt(i);
      if (c == '/' || c == '?' || c == '#') {
        end = i;
        break;
      }
    }
    String authority = afterScheme.substring(0, end);
    String rest = afterScheme.substring(end);
    if (authority.indexOf('@') >= 0) {
      return new Result(Optional.empty(), "it carries user information (user@host)");
    }
    String host;
    String portText;
    if (authority.startsWith("[")) {
      int close = authority.indexOf(']');
      if (close < 0) {
        return new Result(Optional.empty(), "its IPv6 host has no closing ]");
      }
      host = authority.substring(1, close);
      String after = authority.substring(close + 1);
      if (!after.isEmpty() && !after.startsWith(":")) {
        return new Result(Optional.empty(), "something follows its IPv6 host");
      }
      portText = after.isEmpty() ? null : after.substring(1);
      if (!IPV6.matcher(host).matches() || host.indexOf(':') < 0) {
        return new Result(Optional.empty(), "its host [" + host + "] is not an IPv6 address");
      }
    } else {
      int colon = authority.lastIndexOf(':');
      host = colon < 0 ? authority : authority.substring(0, colon);
      portText = colon < 0 ? null : authority.substring(colon + 1);
      if (host.isEmpty()) {
        return new Result(Optional.empty(), "it names no host");
      }
      if (!HOST_NAME.matcher(host).matches()) {
        return new Result(Optional.empty(), "its host \"" + host + "\" is not a host name");
      }
    }
    OptionalInt port = OptionalInt.empty();
    if (portText != null) {
      if (portText.isEmpty()
          || portText.length() > 9
          || !portText.chars().allMatch(c -> c >= '0' && c <= '9')) {
        return new Result(Optional.empty(), "its port \"" + portText + "\" is not a number");
      }
      int value = Integer.parseInt(portText);
      if (value < 1 || value > 65535) {
        return new Result(Optional.empty(), "its port must be between 1 and 65535 but is " + value);
      }
      port = OptionalInt.of(value);
    }
    if (!REST.matcher(rest).matches()) {
      return new Result(Optional.empty(), "its path is not printable ASCII");
    }
    return new Result(Optional.of(new OpcTcpUrl(text, host, port, rest)), "");
  }

  /** A parse: the URL, or why there is none. */
  public record Result(Optional<OpcTcpUrl> url, String problem) {
    public Result {
      url = url == null ? Optional.empty() : url;
      problem = problem == null ? "" : problem;
    }
  }

  @Override
  public String toString() {
    return text;
  }
}
