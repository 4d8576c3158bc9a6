package io.jakri.handler.onvif;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.onvif.FilterList.Action;
import io.jakri.handler.onvif.FilterList.Match;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Akri's {@code execute_filter} cases, and the two ways of matching. */
class FilterListTest {

  private static final Optional<List<String>> FOO = Optional.of(List.of("foo"));
  private static final Optional<List<String>> UNKNOWN = Optional.empty();

  @Test
  void noFilterFiltersNothingOut() {
    assertThat(FilterList.filtersOut(Optional.empty(), FOO, Match.IGNORE_CASE)).isFalse();
    assertThat(FilterList.filtersOut(Optional.empty(), UNKNOWN, Match.IGNORE_CASE)).isFalse();
  }

  @Test
  void excludeWithNoItemsFiltersNothingOutEvenAnUnknownValue() {
    FilterList f = new FilterList(Action.Exclude, List.of());
    assertThat(f.filtersOut(FOO, Match.IGNORE_CASE)).isFalse();
    assertThat(f.filtersOut(UNKNOWN, Match.IGNORE_CASE)).isFalse();
  }

  @Test
  void includeWithNoItemsFiltersEverythingOut() {
    FilterList f = new FilterList(Action.Include, List.of());
    assertThat(f.filtersOut(FOO, Match.IGNORE_CASE)).isTrue();
    assertThat(f.filtersOut(UNKNOWN, Match.IGNORE_CASE)).isTrue();
  }

  @Test
  void anUnknownValueIsFilteredOutByAnyFilterWithItems() {
    assertThat(
            new FilterList(Action.Exclude, List.of("foo", "bar"))
                .filtersOut(UNKNOWN, Match.IGNORE_CASE))
        .isTrue();
    assertThat(
            new FilterList(Action.Include, List.of("foo", "bar"))
                .filtersOut(UNKNOWN, Match.IGNORE_CASE))
        .isTrue();
  }

  @Test
  void includeKeepsMatchesAndExcludeDropsThem() {
    FilterList exclude = new FilterList(Action.Exclude, List.of("foo", "bar"));
    FilterList include = new FilterList(Action.Include, List.of("foo", "bar"));
    assertThat(exclude.filtersOut(FOO, Match.IGNORE_CASE)).isTrue();
    assertThat(exclude.filtersOut(Optional.of(List.of("BAR")), Match.IGNORE_CASE)).isTrue();
    assertThat(exclude.filtersOut(Optional.of(List.of("foobar")), Match.IGNORE_CASE)).isFalse();
    assertThat(include.filtersOut(FOO, Match.IGNORE_CASE)).isFalse();
    assertThat(include.filtersOut(Optional.of(List.of("Bar")), Match.IGNORE_CASE)).isFalse();
    assertThat(include.filtersOut(Optional.of(List.of("foobar")), Match.IGNORE_CASE)).isTrue();
  }

  @Test
  void scopesMatchWholeWordsExactly() {
    FilterList include = new FilterList(Action.Include, List.of("onvif://www.onvif.org/name/NVT"));
    Optional<List<String>> scopes =
        Optional.of(List.of("onvif://www.onvif.org/type/video  onvif://www.onvif.org/name/NVT\n"));
    assertThat(include.filtersOut(scopes, Match.ANY_WORD)).isFalse();
    assertThat(
            new FilterList(Action.Include, List.of("onvif://www.onvif.org/name"))
                .filtersOut(scopes, Match.ANY_WORD))
        .isTrue();
    assertThat(
            new FilterList(Action.Include, List.of("onvif://www.onvif.org/name/nvt"))
                .filtersOut(scopes, Match.ANY_WORD))
        .as("scopes are case-sensitive")
        .isTrue();
    assertThat(
            new FilterList(Action.Exclude, List.of("onvif://www.onvif.org/name/NVT"))
                .filtersOut(scopes, Match.ANY_WORD))
        .isTrue();
    assertThat(include.filtersOut(Optional.of(List.of()), Match.ANY_WORD))
        .as("no scopes at all")
        .isTrue();
  }
}
