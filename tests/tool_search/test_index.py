from __future__ import annotations

from stowage.tool_search import Catalog, FieldWeights, ToolIndex
from stowage.tool_search.index import MATCH_CLOSEST, MATCH_FUZZY, MATCH_NAME, MATCH_TEXT

from .catalogs import tool


def names(index: ToolIndex, query: str, limit: int = 5) -> list[str]:
    return [h.name for h in index.search(query, limit)]


def test_bm25_finds_by_description_and_parameters(catalog):
    index = ToolIndex(catalog)
    assert names(index, "what's the forecast in Paris tomorrow")[0] == "weather_forecast"
    assert names(index, "invite people by email address")[0] == "calendar.create_event"  # param text
    assert names(index, "channel")[0] == "sendSlackMessage"  # parameter name
    hits = index.search("read the contents of a file", 3)
    assert hits[0].name == "mcp__filesystem__read_file" and hits[0].match == MATCH_TEXT
    assert all(h.score > 0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_inflections_match(catalog):
    index = ToolIndex(catalog)
    assert names(index, "listing issue")[0] == "mcp__github__list_issues"
    assert names(index, "scheduling events")[0] == "calendar.create_event"


def test_nested_parameters_are_indexed_two_levels_deep():
    nested = {
        "name": "deploy",
        "description": "Deploy an application.",
        "parameters": {
            "type": "object",
            "properties": {
                "config": {
                    "type": "object",
                    "properties": {
                        "regions": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "zone": {"type": "string", "description": "Availability zone like eu-west-1a"}
                                },
                            },
                        }
                    },
                }
            },
        },
    }
    index = ToolIndex(Catalog.from_schemas([nested, tool("other", "Unrelated tool.")]))
    assert names(index, "availability zone")[0] == "deploy"
    assert names(index, "regions")[0] == "deploy"


def test_name_field_outweighs_description():
    cat = Catalog.from_schemas(
        [
            tool("archive_project", "Move something to cold storage."),
            tool("store_note", "Archive a note; the note can be restored from the archive later."),
        ]
    )
    assert names(ToolIndex(cat), "archive")[0] == "archive_project"
    # With the name weight removed, the description-heavy tool wins: the weight is what decides.
    flat = FieldWeights(name=0.0)
    assert names(ToolIndex(cat, flat), "archive")[0] == "store_note"


def test_server_tokens_count_but_weakly():
    cat = Catalog.from_schemas(
        [
            tool("mcp__github__search_code", "Search code."),
            tool("github_repo_stats", "Statistics of a GitHub repo."),
            tool("mcp__jira__search_code", "Search code in Jira."),
        ]
    )
    index = ToolIndex(cat)
    assert names(index, "github")[0] == "github_repo_stats"
    assert "mcp__github__search_code" in names(index, "github", 3)
    assert names(index, "search code github")[0] == "mcp__github__search_code"


def test_exact_name_beats_chattier_neighbours():
    # openai/codex #21503: BM25 alone ranks the exactly named tool below a verbose one.
    cat = Catalog.from_schemas(
        [
            tool("get_file", "Fetch."),
            tool("file_manager", "Get file, get file metadata, get file contents, get file history of any file."),
        ]
    )
    index = ToolIndex(cat)
    scores = index.bm25("get file")
    by_name = {cat.entries[i].name: s for i, s in scores.items()}
    assert by_name["file_manager"] > by_name["get_file"]  # BM25 alone gets it wrong...
    assert names(index, "get file")[0] == "get_file"  # ...the name boost puts it first
    hit = index.search("get_file", 1)[0]
    assert hit.name == "get_file" and hit.match == MATCH_NAME


def test_exact_name_variants(catalog):
    index = ToolIndex(catalog)
    for query in [
        "mcp__github__create_issue",
        "create_issue",
        "Create Issue",
        "create-issue",
        "CreateIssue",
        "github.create_issue",
        "github create issue",
        "please run mcp__github__create_issue now",
        "send_slack_message",
        "calendar create event",
    ]:
        hit = index.search(query, 3)[0]
        assert hit.match == MATCH_NAME, query
    assert index.search("create_issue", 1)[0].name == "mcp__github__create_issue"
    assert index.search("send_slack_message", 1)[0].name == "sendSlackMessage"


def test_ambiguous_short_name_returns_every_server(catalog):
    cat = Catalog.from_schemas([tool("mcp__a__search", "A."), tool("mcp__b__search", "B."), tool("lookup", "Search.")])
    hits = ToolIndex(cat).search("search", 3)
    assert {h.name for h in hits[:2]} == {"mcp__a__search", "mcp__b__search"}
    assert all(h.match == MATCH_NAME for h in hits[:2])


def test_typos_find_the_tool_first(catalog):
    index = ToolIndex(catalog)
    for query, expected in [
        ("creat_isue", "mcp__github__create_issue"),
        ("weather_forcast", "weather_forecast"),
        ("mcp__filesytem__read_file", "mcp__filesystem__read_file"),
        ("sendSlakMessage", "sendSlackMessage"),
    ]:
        hit = index.search(query, 3)[0]
        assert hit.name == expected, query
        assert hit.match in (MATCH_NAME, MATCH_FUZZY)


def test_no_match_falls_back_to_closest_names(catalog):
    index = ToolIndex(catalog)
    hits = index.search("githb", 3)
    assert hits, "a search must not come back empty"
    assert all(h.match == MATCH_CLOSEST for h in hits)
    assert all(h.name.startswith("mcp__github__") for h in hits)
    assert index.search("qqqqzzzz", 2)  # no shared trigram at all: still answers
    assert index.search("   ", 5) == []
    assert ToolIndex(Catalog.from_schemas([])).search("anything", 5) == []


def test_limit_and_determinism(catalog):
    index = ToolIndex(catalog)
    assert len(index.search("file", 1)) == 1
    assert index.search("file", 0) == []
    assert names(index, "file", 5) == names(ToolIndex(catalog), "file", 5)


def test_suggest_offers_close_names(catalog):
    index = ToolIndex(catalog)
    assert index.suggest("create_isue")[0] == "mcp__github__create_issue"
    assert "weather_forecast" in index.suggest("wether")
    assert index.suggest("zzzzzzzzzzzz") == []


def test_non_english_text_is_searchable():
    cat = Catalog.from_schemas(
        [
            tool("get_weather", "查询城市的天气状况", city="城市名称"),
            tool("translate", "Traduit un texte en français."),
            tool("search_docs", "Search documentation."),
        ]
    )
    index = ToolIndex(cat)
    assert names(index, "我想知道上海目前的天气状况")[0] == "get_weather"
    assert names(index, "traduire en français")[0] == "translate"
    # A request in a script the catalog does not use gets nothing, not the closest-spelt junk
    # (a Latin-letter query that matches nothing still gets the closest names).
    only_english = ToolIndex(Catalog.from_schemas([tool("search_docs", "Search documentation.")]))
    assert only_english.search("天气", 1) == []
    assert only_english.search("获取阿迪达斯的工单", 5) == []
    assert names(only_english, "srch_dcs") == ["search_docs"]
