package io.jakri.handler;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class NamesTest {

  @ParameterizedTest
  @CsvSource({"A,true", "_x1,true", "PATH,true", "1A,false", "A-B,false", "'',false", "A=B,false"})
  void envNamesAreShellIdentifiers(String name, boolean valid) {
    assertThat(Names.isEnvName(name)).isEqualTo(valid);
  }

  @ParameterizedTest
  @CsvSource({
    "A,true",
    "SIMPLE_DEVICE_simple-device-node-a.example.com-0,true",
    "-x,true",
    ".x,true",
    "1A,false",
    "'',false",
    "A=B,false",
    "'A B',false",
    "A/B,false"
  })
  void containerEnvNamesAreThoseKubernetesAccepts(String name, boolean valid) {
    assertThat(Names.isContainerEnvName(name)).isEqualTo(valid);
  }

  @ParameterizedTest
  @CsvSource({
    "example.com,true",
    "a,true",
    "a-b.c0,true",
    "Example.com,false",
    "-a.com,false",
    "a..com,false",
    "a.com.,false",
    "'',false"
  })
  void dnsSubdomainsAreLowercaseLabels(String name, boolean valid) {
    assertThat(Names.isDnsSubdomain(name)).isEqualTo(valid);
  }

  @ParameterizedTest
  @ValueSource(strings = {"example.com/widget", "akri.sh/cam-1a2b3c", "a/b.c_d-e"})
  void validExtendedResourceNamesHaveNoProblem(String name) {
    assertThat(Names.extendedResourceProblem(name)).isEmpty();
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "widget | must have the form <domain>/<name> with exactly one '/'",
        "a/b/c | must have the form <domain>/<name> with exactly one '/'",
        "Example.com/w | must start with a lowercase DNS subdomain (such as example.com) before the"
            + " '/'",
        "kubernetes.io/gpu | must not be in the kubernetes.io namespace, which is reserved",
        "example.com/ | must have a name part of 1 to 63 characters after the '/'",
        "example.com/-x | must have a name part of letters, digits, '-', '_' and '.', starting and"
            + " ending with a letter or digit",
      })
  void invalidExtendedResourceNamesSayWhy(String name, String why) {
    assertThat(Names.extendedResourceProblem(name)).contains(why);
  }

  @ParameterizedTest
  @ValueSource(ints = {253, 254})
  void subdomainsAreAtMost253Characters(int length) {
    String name = ("a".repeat(63) + ".").repeat(4).substring(0, length - 1) + "a";
    assertThat(Names.isDnsSubdomain(name)).isEqualTo(length <= 253);
  }
}
