from __future__ import annotations

import pytest

from stowage.tool_search.tokens import (
    name_key,
    name_tokens,
    normalize,
    split_tool_name,
    split_words,
    tokenize,
    trigrams,
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("create_issue", ["create", "issue"]),
        ("getUserInfo", ["get", "user", "info"]),
        ("getHTTPResponse", ["get", "http", "response"]),
        ("math.factorial", ["math", "factorial"]),
        ("s3-put-object", ["s", "3", "s3", "put", "object"]),
        ("ListS3Buckets", ["list", "s", "3", "buckets", "s3"]),
        ("oauth2Token", ["oauth", "2", "token", "oauth2"]),
    ],
)
def test_split_words_on_every_identifier_boundary(text, expected):
    assert split_words(text) == expected


def test_mcp_name_splits_server_from_tool():
    assert split_tool_name("mcp__github__create_issue") == ("github", "create_issue")
    assert split_tool_name("create_issue") == ("", "create_issue")
    assert split_tool_name("mcp__broken") == ("", "mcp__broken")
    tool_toks, server_toks = name_tokens("mcp__git_hub__create_issue")
    assert tool_toks == [normalize("create"), normalize("issue")]
    assert server_toks == ["git", "hub"]
    assert "mcp" not in tool_toks + server_toks


@pytest.mark.parametrize(
    "a, b",
    [
        ("issues", "issue"),
        ("creating", "create"),
        ("created", "creates"),
        ("listed", "list"),
        ("mapping", "map"),
        ("queries", "query"),
        ("boxes", "box"),
        ("files", "file"),
        ("updated", "update"),
        ("movies", "movie"),
        ("restaurants", "restaurant"),
    ],
)
def test_normalize_conflates_inflections(a, b):
    assert normalize(a) == normalize(b)


@pytest.mark.parametrize("word", ["string", "status", "class", "bring", "go", "s3", "2024"])
def test_normalize_leaves_words_that_only_look_inflected(word):
    # "string" must not become "str", nor "status" lose its "s".
    assert normalize(word) == word


def test_tokenize_lowercases_and_drops_stopwords():
    assert tokenize("Find THE best Restaurants in New York") == ["find", "best", normalize("restaurant"), "new", "york"]
    assert tokenize("the of and") == []


def test_name_key_ignores_case_and_separators():
    assert name_key("Create-Issue") == name_key("create_issue") == name_key("createIssue") == "createissue"


def test_trigrams_pad_short_keys():
    assert trigrams("ab") == {"^ab", "ab$"}
    assert "^cr" in trigrams("create")


def test_the_stemmer_is_snowball_english():
    from stowage.tool_search.stemmer import ENGINE

    assert ENGINE == "snowball-english"  # a declared dependency, not the fallback
    assert normalize("restaurants") == "restaur" and normalize("queries") == "queri"


def test_fallback_suffix_rules_conflate_plurals_and_verb_forms():
    from stowage.tool_search.stemmer import _suffix_stem

    assert _suffix_stem("issues") == _suffix_stem("issue") == "issue"
    assert _suffix_stem("queries") == "query" and _suffix_stem("status") == "status"
