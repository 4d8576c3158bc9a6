package io.jakri.agent.cluster;

/** JSON-pointer (RFC 6901) paths for the JSON patches the agent sends. */
final class JsonPointer {

  private JsonPointer() {}

  /** Escapes one reference token: {@code ~} first, then {@code /}. */
  static String escape(String token) {
    return token.replace("~", "~0").replace("/", "~1");
  }
}
