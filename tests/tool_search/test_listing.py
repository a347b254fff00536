"""The deferred-tool listing in the search bridge's description: grouped, budgeted, byte-stable."""

from __future__ import annotations

import json

from stowage.tool_search import Catalog, assemble_tools, bridge_schemas, decide
from stowage.tool_search.listing import (
    HEADER,
    LEVEL_COUNTS,
    LEVEL_NAMES,
    LEVEL_PARTIAL,
    LEVEL_SENTENCES,
    ListingCache,
    approx_tokens,
    build_listing,
    first_sentence,
    listing_budget,
)

from .catalogs import SCHEMAS, tool


def big_catalog(servers: int = 30, per: int = 20) -> Catalog:
    return Catalog.from_schemas(
        [
            tool(f"mcp__srv{s:02d}__tool_{t:02d}", f"Does thing {t} of server {s}. More text.")
            for s in range(servers)
            for t in range(per)
        ]
    )


def test_first_level_is_name_and_first_sentence_grouped_by_toolset(catalog):
    text, level = build_listing(catalog, 4000)
    assert level == LEVEL_SENTENCES and text.startswith(HEADER)
    assert "[mcp-github]\n- mcp__github__create_issue: Create a new issue in a GitHub repository." in text
    assert "- weather_forecast: Get the weather forecast for a city." in text
    # groups in name order, each tool once
    assert text.index("[mcp-filesystem]") < text.index("[mcp-github]")
    assert all(text.count(f"- {n}:") == 1 for n in catalog.names)


def test_the_listing_degrades_to_names_then_counts_then_part_of_the_groups():
    cat = big_catalog()
    sentences = approx_tokens(build_listing(cat, 10**6)[0])
    names_text, level = build_listing(cat, sentences - 1)
    assert level == LEVEL_NAMES and "[mcp-srv00] mcp__srv00__tool_00, mcp__srv00__tool_01" in names_text
    counts_text, level = build_listing(cat, approx_tokens(names_text) - 1)
    assert level == LEVEL_COUNTS and "[mcp-srv07] 20 tools, names not listed" in counts_text
    partial, level = build_listing(cat, approx_tokens(counts_text) // 2)
    assert level == LEVEL_PARTIAL and "more toolsets" in partial
    assert approx_tokens(partial) <= approx_tokens(counts_text) // 2
    for budget in (10, 50, 200, 1000, 5000):
        text, _ = build_listing(cat, budget)
        assert approx_tokens(text) <= budget
    assert build_listing(cat, 0) == ("", "") and build_listing(cat, 5) == ("", "")


def test_first_sentence():
    assert first_sentence("Read a file. Then more.") == "Read a file."
    assert first_sentence("Line one\nline two") == "Line one"
    assert first_sentence("v1.2 is a version number and stays whole") == "v1.2 is a version number and stays whole"
    long = first_sentence("word " * 100)
    assert len(long) <= 121 and long.endswith("…")


def test_budget_is_the_smaller_of_max_and_window_share():
    assert listing_budget(4000, 5, 128_000) == 4000
    assert listing_budget(4000, 5, 32_000) == 1600
    assert listing_budget(0, 5, 128_000) == 0 and listing_budget(4000, 0, 128_000) == 0
    assert listing_budget(4000, 5, 0) == 4000  # unknown window: the maximum alone


def test_listing_is_byte_stable_and_follows_the_catalog():
    cache = ListingCache()
    a = cache.get(Catalog.from_schemas(SCHEMAS), 4000)
    b = cache.get(Catalog.from_schemas(list(reversed(SCHEMAS))), 4000)  # order of the host's list is irrelevant
    assert a == b
    c = cache.get(Catalog.from_schemas(SCHEMAS[:-1]), 4000)
    assert c != a and "calendar.create_event" not in c[0]


def test_the_search_bridge_carries_the_listing_and_the_others_do_not_change(catalog):
    text, _ = build_listing(catalog, 4000)
    plain, listed = bridge_schemas(), bridge_schemas(listing=text)
    assert listed[0]["description"] == plain[0]["description"] + "\n\n" + text
    assert listed[1:] == plain[1:] and listed[0]["parameters"] == plain[0]["parameters"]
    decision = decide(SCHEMAS, mode="on", context_length=128_000, core_names=())
    tools = assemble_tools(SCHEMAS, decision, listing=text, wrapped=True)
    search = next(t for t in tools if t["function"]["name"] == "stowage_tool_search")
    assert text in search["function"]["description"]
    assert json.dumps(assemble_tools(SCHEMAS, decision, listing=text)) == json.dumps(tools)


def test_pieces_are_counted_exactly_and_add_up():
    from stowage.tool_search.listing import PIECE_CHARS, count_in_pieces

    text = "\n".join(f"- tool_{i}: does thing number {i} for you." for i in range(300))
    seen: list[str] = []

    def count(piece: str) -> int:
        seen.append(piece)
        return len(piece)

    assert count_in_pieces(count, text) == len(text)
    assert "".join(seen) == text and all(len(p) <= PIECE_CHARS for p in seen) and len(seen) > 1
    assert all(p[0] in " \n" for p in seen[1:])  # cut before whitespace, never inside a word
    assert count_in_pieces(count, "") == 0


def test_the_budget_holds_under_the_real_tokenizer():
    from stowage.context_engine.chat.tokens import TokenCounter

    counter = TokenCounter()
    exact = lambda t: len(counter.loaded.encoding.encode_ordinary(t))  # noqa: E731
    cat = big_catalog()
    for budget in (100, 700, 3000, 8000):
        text, _ = build_listing(cat, budget, counter.count_text)
        assert exact(text) <= budget
