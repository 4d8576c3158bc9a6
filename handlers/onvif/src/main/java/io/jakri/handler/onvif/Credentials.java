package io.jakri.handler.onvif;

import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.SafeYaml;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Camera credentials read from a Configuration's {@code discoveryProperties}, exactly as Akri's
 * {@code CredentialStore} reads them (values come resolved: in cluster mode a {@code valueFrom}
 * Secret or ConfigMap key is already its text). Later sources override earlier ones for the same
 * UUID:
 *
 * <ol>
 *   <li>{@code device_credential_list}: a JSON list of property names; each named property holds a
 *       JSON object {@code {"<uuid>": {"username": u, "password": p, "base64encoded": false}}}
 *       ({@code password} optional; {@code base64encoded: true} means the password is base64 of
 *       UTF-8);
 *   <li>{@code device_credential_ref_list}: a JSON list of property names; each holds {@code
 *       {"<uuid>": {"username_ref": name, "password_ref": name}}} naming the properties that hold
 *       the username and password (an entry whose username is missing or empty is skipped);
 *   <li>{@code username_<id>} / {@code password_<id>}: the id with {@code _} turned into {@code -}
 *       is the UUID (property names cannot hold {@code -}); a password without a username is
 *       ignored;
 *   <li>{@code username_default} / {@code password_default}: used for every camera without its own.
 * </ol>
 *
 * A list or entry that is not valid JSON of that shape is ignored, as in Akri. UUID keys are
 * compared exactly (Akri looks up the lower-cased device UUID). Immutable; {@link #toString()}
 * never shows a password.
 */
public final class Credentials {

  public static final String CREDENTIAL_LIST = "device_credential_list";
  public static final String CREDENTIAL_REF_LIST = "device_credential_ref_list";
  public static final String USERNAME_PREFIX = "username_";
  public static final String PASSWORD_PREFIX = "password_";
  public static final String DEFAULT_USERNAME = "username_default";
  public static final String DEFAULT_PASSWORD = "password_default";
  static final String DEFAULT_ID = "default";

  /** A username and, optionally, a password. */
  public record Credential(String username, Optional<String> password) {
    public Credential {
      Objects.requireNonNull(username, "username");
      password = password == null ? Optional.empty() : password;
    }

    @Override
    public String toString() {
      return "Credential[username="
          + username
          + ", password="
          + (password.isPresent() ? "***" : "none")
          + "]";
    }
  }

  private final Map<String, Credential> byId;

  private Credentials(Map<String, Credential> byId) {
    this.byId = Map.copyOf(byId);
  }

  /** No credentials at all. */
  public static Credentials none() {
    return new Credentials(Map.of());
  }

  /** Reads every credential source from resolved discovery properties. Never throws. */
  public static Credentials from(Map<String, String> properties) {
    Map<String, Credential> byId = new HashMap<>();
    for (String list : names(properties.get(CREDENTIAL_LIST))) {
      byId.putAll(credentialList(properties.get(list)));
    }
    for (String list : names(properties.get(CREDENTIAL_REF_LIST))) {
      byId.putAll(credentialRefList(properties.get(list), properties));
    }
    for (Map.Entry<String, String> e : properties.entrySet()) {
      String key = e.getKey();
      if (key.startsWith(USERNAME_PREFIX) && key.length() > USERNAME_PREFIX.length()) {
        String id = key.substring(USERNAME_PREFIX.length());
        Optional<String> password = Optional.ofNullable(properties.get(PASSWORD_PREFIX + id));
        byId.put(id.replace('_', '-'), new Credential(e.getValue(), password));
      }
    }
    String defaultUser = properties.get(DEFAULT_USERNAME);
    if (defaultUser != null) {
      byId.put(
          DEFAULT_ID,
          new Credential(defaultUser, Optional.ofNullable(properties.get(DEFAULT_PASSWORD))));
    }
    return new Credentials(byId);
  }

  /** The credential for a camera: its own, else the default one, else none. */
  public Optional<Credential> forUuid(String uuid) {
    Credential own = byId.get(uuid);
    return Optional.ofNullable(own != null ? own : byId.get(DEFAULT_ID));
  }

  /** How many UUIDs (and the default) have a credential. */
  public int size() {
    return byId.size();
  }

  @Override
  public String toString() {
    return "Credentials" + byId.keySet();
  }

  /** One credential list; any entry of the wrong shape voids the whole list (Akri's serde). */
  private static Map<String, Credential> credentialList(String text) {
    Map<String, Credential> result = new HashMap<>();
    if (!(json(text) instanceof Map<?, ?> map)) {
      return result;
    }
    for (Map.Entry<?, ?> e : map.entrySet()) {
      if (!(e.getKey() instanceof String id)
          || !(e.getValue() instanceof Map<?, ?> data)
          || !(data.get("username") instanceof String username)
          || !(data.get("password") == null || data.get("password") instanceof String)
          || !(data.get("base64encoded") == null || data.get("base64encoded") instanceof Boolean)) {
        return Map.of();
      }
      Optional<String> password = Optional.ofNullable((String) data.get("password"));
      if (Boolean.TRUE.equals(data.get("base64encoded"))) {
        password = password.flatMap(Credentials::decodeBase64);
      }
      result.put(id, new Credential(username, password));
    }
    return result;
  }

  /**
   * One credential reference list; any entry of the wrong shape voids the whole list, an entry
   * whose username property is missing or empty is skipped (both as in Akri).
   */
  private static Map<String, Credential> credentialRefList(
      String text, Map<String, String> properties) {
    Map<String, Credential> result = new HashMap<>();
    if (!(json(text) instanceof Map<?, ?> map)) {
      return result;
    }
    for (Map.Entry<?, ?> e : map.entrySet()) {
      if (!(e.getKey() instanceof String id)
          || !(e.getValue() instanceof Map<?, ?> data)
          || !(data.get("username_ref") instanceof String usernameRef)
          || !(data.get("password_ref") == null || data.get("password_ref") instanceof String)) {
        return Map.of();
      }
      String username = properties.get(usernameRef);
      if (username == null || username.isEmpty()) {
        continue;
      }
      Optional<String> password =
          Optional.ofNullable((String) data.get("password_ref")).map(properties::get);
      result.put(id, new Credential(username, password));
    }
    return result;
  }

  private static List<String> names(String listJson) {
    List<String> names = new ArrayList<>();
    if (json(listJson) instanceof List<?> list) {
      for (Object o : list) {
        if (!(o instanceof String s)) {
          return List.of(); // Akri: the whole list must be strings
        }
        names.add(s);
      }
    }
    return names;
  }

  /** JSON (read as YAML, of which it is a subset, with the handler API's bounds); null if bad. */
  private static Object json(String text) {
    if (text == null || text.isBlank()) {
      return null;
    }
    try {
      return SafeYaml.load(text);
    } catch (InvalidDetailsException e) {
      return null;
    }
  }

  private static Optional<String> decodeBase64(String encoded) {
    try {
      byte[] bytes = Base64.getDecoder().decode(encoded.strip());
      return Optional.of(
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(bytes))
              .toString());
    } catch (IllegalArgumentException | CharacterCodingException e) {
      return Optional.empty();
    }
  }
}
