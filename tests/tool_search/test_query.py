from __future__ import annotations

from stowage.tool_search import Catalog, ToolIndex
from stowage.tool_search.query import ARGUMENT_WEIGHT, has_latin, query_weights
from stowage.tool_search.tokens import normalize

from .catalogs import tool


def test_digits_and_quoted_values_weigh_less_than_words():
    w = query_weights("book a room for 3 nights named 'Sea View'")
    assert w[normalize("room")] == 1.0 and w[normalize("nights")] == 1.0
    assert w["3"] == ARGUMENT_WEIGHT
    assert w[normalize("sea")] == ARGUMENT_WEIGHT and w[normalize("view")] == ARGUMENT_WEIGHT


def test_apostrophes_do_not_open_a_quoted_span():
    w = query_weights("I'm sure they're looking for the weather")
    assert w[normalize("weather")] == 1.0 and w[normalize("looking")] == 1.0


def test_a_word_also_outside_quotes_keeps_its_full_weight():
    assert query_weights("search 'search engines'")[normalize("search")] == 1.0


def test_a_query_of_stopwords_keeps_them():
    assert list(query_weights("the of and")) == ["the", "of", "and"]


def test_has_latin():
    assert has_latin("s3") and has_latin("北京 p4") and not has_latin("北京后天的天气如何？")


def test_a_number_in_the_question_counts_half_a_word():
    cat = Catalog.from_schemas(
        [tool("Hotels_4_ReserveHotel", "Reserve a hotel room."), tool("other", "Something else.")]
    )
    index = ToolIndex(cat)
    assert abs(index.bm25("4")[0] - (index.bm25("reserve 4")[0] - index.bm25("reserve")[0])) < 1e-9
    assert index._bm25({"4": 1.0})[0] == 2 * index.bm25("4")[0]


def test_name_coverage_prefers_the_tool_named_by_the_query_words():
    cat = Catalog.from_schemas(
        [
            tool(
                "get_weather", "Get the weather. Weather data for any city: weather now and weather later.", city="City"
            ),
            tool("get_current_weather", "Returns conditions for a location.", location="City"),
        ]
    )
    assert ToolIndex(cat).search("current weather in Boston", 2)[0].name == "get_current_weather"


def test_adjacent_name_words_in_the_query_are_a_phrase_bonus():
    # Same words, same text: only the order of the name's words tells them apart.
    cat = Catalog.from_schemas([tool("report_weather", "Weather data."), tool("weather_report", "Weather data.")])
    hits = ToolIndex(cat).search("a weather report please", 2)
    assert hits[0].name == "weather_report" and hits[0].score > hits[1].score


def test_a_search_that_finds_nothing_says_so_with_the_sources_and_a_hint(catalog):
    from stowage.tool_search import BridgeService, IndexCache

    out = BridgeService(catalog, cache=IndexCache()).search("北京后天的天气如何？")
    assert out["matches"] == [] and "Nothing matched" in out["note"] and '"*"' in out["note"]
    assert out["sources"]["mcp-github"] == 3 and sum(out["sources"].values()) == len(catalog)
