"""Value shapes in a request imply the slot words a tool schema uses for them."""

from __future__ import annotations

import pytest

from stowage.tool_search import Catalog, ToolIndex
from stowage.tool_search.query import IMPLIED_WEIGHT, query_weights
from stowage.tool_search.tokens import normalize, tokenize
from stowage.tool_search.value_hints import implied_slot_words

from .catalogs import tool


@pytest.mark.parametrize(
    "text, words",
    [
        ("forecast for Campbell on the 4th of March 2023", ("date",)),
        ("rain in Vancouver on 2023-03-10?", ("date",)),
        ("what is on tomorrow", ("date",)),
        ("wake me at 7:30 am", ("time",)),
        ("open https://huggingface.co with start", ("url",)),
        ("mail jane.doe@example.org the notes", ("email",)),
        ("convert 500 USD to euros", ("amount", "currency")),
        ("a 15% tip", ("percent",)),
        ("summarize report.csv and ./src/app/main.py", ("file", "path")),
        ("the current weather in Boston", ()),
        ("search 'march madness' teams", ()),
        ("2023 sales by region", ()),
    ],
)
def test_value_shapes_imply_slot_words(text, words):
    assert implied_slot_words(text) == words


def test_implied_words_weigh_less_and_never_lower_a_word_the_query_says():
    w = query_weights("weather forecast for Foster City on April 25th 2023")
    assert w[normalize("date")] == IMPLIED_WEIGHT < 1.0
    said = query_weights("the date of the 4th of July")
    assert said[normalize("date")] == 1.0


def test_a_query_of_values_only_still_gets_its_words():
    assert query_weights("2023-03-10") and normalize("date") not in query_weights("the of and")


def test_ordinal_endings_are_not_words():
    assert tokenize("the 21st century on the 3rd floor, 25th") == [
        "21",
        normalize("century"),
        "3",
        normalize("floor"),
        "25",
    ]
    assert "s3" in tokenize("s3") and "oauth2" in tokenize("oauth2")


def test_a_dated_question_prefers_the_tool_that_takes_a_date():
    cat = Catalog.from_schemas(
        [
            tool("weather_now", "Weather for a city.", city="The city name."),
            tool("weather_on_day", "Weather for a city.", city="The city name.", date="The day, YYYY-MM-DD."),
        ]
    )
    index = ToolIndex(cat)
    assert [h.name for h in index.search("weather in Campbell on 2023-03-04", 2)][0] == "weather_on_day"
    assert [h.name for h in index.search("weather in Campbell", 2)][0] == "weather_now"
