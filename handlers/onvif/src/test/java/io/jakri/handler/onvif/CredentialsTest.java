package io.jakri.handler.onvif;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.onvif.Credentials.Credential;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The cases of Akri's credential_store.rs tests. */
class CredentialsTest {

  private static final String U5F = "5f5a69c2-e0ae-504f-829b-00fcdab169cc";
  private static final String U6A = "6a67158b-42b1-400b-8afe-1bec9a5d7909";
  private static final String U7A = "7a21dc67-8438-5588-1547-4d1349048438";

  private static Credential cred(String user, String password) {
    return new Credential(user, Optional.ofNullable(password));
  }

  private static Map<String, String> usernamePassword() {
    return Map.of(
        "username_" + U5F.replace('-', '_'), "username_5f",
        "password_" + U5F.replace('-', '_'), "password_5f");
  }

  private static Map<String, String> credentialList() {
    return Map.of(
        "device_credential_list", "[\"secret_list1\", \"secret_list2\"]",
        "secret_list1",
            "{\""
                + U5F
                + "\": {\"username\": \"uname_1\", \"password\": \"password_1\"},"
                + " \""
                + U6A
                + "\": {\"username\": \"uname_3\", \"password\": \"YWRtaW4=\","
                + " \"base64encoded\": true}}",
        "secret_list2",
            "{\"" + U7A + "\": {\"username\": \"uname_2\", \"password\": \"password_2\"}}");
  }

  private static Map<String, String> refList() {
    return Map.of(
        "device_credential_ref_list", "[\"secret_ref_list1\", \"secret_ref_list2\"]",
        "secret_ref_list1",
            "{\""
                + U5F
                + "\": {\"username_ref\": \"device_1_username\", \"password_ref\":"
                + " \"device_1_password\"}}",
        "secret_ref_list2",
            "{\""
                + U7A
                + "\": {\"username_ref\": \"device_2_username\", \"password_ref\":"
                + " \"device_2_password\"}}",
        "device_1_username", "user_foo",
        "device_1_password", "password_foo",
        "device_2_username", "user_bar",
        "device_2_password", "password_bar");
  }

  @SafeVarargs
  private static Credentials from(Map<String, String>... sources) {
    Map<String, String> all = new HashMap<>();
    for (Map<String, String> s : sources) {
      all.putAll(s);
    }
    return Credentials.from(all);
  }

  @Test
  void noPropertiesNoCredentials() {
    assertThat(Credentials.from(Map.of()).size()).isZero();
    assertThat(Credentials.from(Map.of()).forUuid(U5F)).isEmpty();
  }

  @Test
  void defaultCredentialServesEveryCamera() {
    Credentials c =
        Credentials.from(
            Map.of("username_default", "default_username", "password_default", "default_password"));
    assertThat(c.forUuid("any_id")).contains(cred("default_username", "default_password"));
  }

  @Test
  void perUuidPropertiesUseUnderscoresForDashes() {
    Credentials c = from(usernamePassword());
    assertThat(c.forUuid(U5F)).contains(cred("username_5f", "password_5f"));
    assertThat(c.forUuid(U7A)).isEmpty();
  }

  @Test
  void credentialListWithBase64Password() {
    Credentials c = from(credentialList());
    assertThat(c.forUuid(U5F)).contains(cred("uname_1", "password_1"));
    assertThat(c.forUuid(U6A)).contains(cred("uname_3", "admin"));
    assertThat(c.forUuid(U7A)).contains(cred("uname_2", "password_2"));
  }

  @Test
  void credentialRefList() {
    Credentials c = from(refList());
    assertThat(c.forUuid(U5F)).contains(cred("user_foo", "password_foo"));
    assertThat(c.forUuid(U7A)).contains(cred("user_bar", "password_bar"));
    assertThat(c.size()).isEqualTo(2);
  }

  @Test
  void laterSourcesWinListThenRefListThenPerUuid() {
    Credentials all = from(credentialList(), refList(), usernamePassword());
    assertThat(all.forUuid(U5F)).contains(cred("username_5f", "password_5f"));
    assertThat(all.forUuid(U6A)).contains(cred("uname_3", "admin"));
    assertThat(all.forUuid(U7A)).contains(cred("user_bar", "password_bar"));
    assertThat(from(credentialList(), usernamePassword()).forUuid(U7A))
        .contains(cred("uname_2", "password_2"));
  }

  @Test
  void ownCredentialBeatsDefaultAndUnknownUuidGetsDefault() {
    Map<String, String> props = new HashMap<>(usernamePassword());
    props.put("username_default", "default_username");
    props.put("password_default", "default_password");
    Credentials c = Credentials.from(props);
    assertThat(c.forUuid(U5F)).contains(cred("username_5f", "password_5f"));
    assertThat(c.forUuid("not-exist-uuid")).contains(cred("default_username", "default_password"));
  }

  @Test
  void brokenListsAreIgnoredAsInAkri() {
    Credentials c =
        Credentials.from(
            Map.of(
                "device_credential_list",
                "[\"a\", \"b\", \"c\"]",
                "a",
                "{not json",
                "b",
                "{\"" + U5F + "\": {\"password\": \"no user\"}}",
                "c",
                "{\""
                    + U7A
                    + "\": {\"username\": \"u\", \"password\": \"%%%\", \"base64encoded\": true}}",
                "device_credential_ref_list",
                "[\"r\"]",
                "r",
                "{\"" + U6A + "\": {\"username_ref\": \"missing\"}}"));
    assertThat(c.forUuid(U5F)).isEmpty();
    assertThat(c.forUuid(U6A)).isEmpty();
    assertThat(c.forUuid(U7A))
        .as("a password that is not base64 is dropped")
        .contains(cred("u", null));
  }

  @Test
  void passwordsNeverShowInText() {
    Credentials c = from(usernamePassword());
    assertThat(c.toString()).doesNotContain("password_5f");
    assertThat(c.forUuid(U5F).orElseThrow().toString()).doesNotContain("password_5f");
  }
}
