"""JSON path resolution: both dialects, helpful errors, bounded serialization."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stowage.blobstore.retrieval.jsonpath import (
    JsonPathError,
    format_path,
    parse_path,
    resolve_json_path,
    serialize_bounded,
    to_pointer,
)

DOC = {
    "items": [{"name": "first", "id": 1}, {"name": "middle", "id": 2}, {"name": "last", "id": 3}],
    "a": {"b": {"c": True}},
    "weird key": {"x.y": 1, 'quo"te': 2, "it's": 3},
    "a/b~c": "pointer-escaped",
    "0": "string key zero",
    "": "empty key",
}


@pytest.mark.parametrize(
    "path,expected",
    [
        ("/items/0/name", "first"),
        ("$.items[0].name", "first"),
        ("items[0].name", "first"),
        ("items[-1].name", "last"),
        ("items.1.name", "middle"),
        ("$.a.b.c", True),
        ('a["b"]["c"]', True),
        ('$["weird key"]["x.y"]', 1),
        ('$["weird key"]["quo\\"te"]', 2),
        ("$['weird key']['it\\'s']", 3),
        ("/a~1b~0c", "pointer-escaped"),
        ('$["0"]', "string key zero"),
        ("/0", "string key zero"),
        ('$[""]', "empty key"),
    ],
)
def test_resolves_both_dialects(path, expected):
    assert resolve_json_path(DOC, path) == expected


def test_top_level_array_with_spaces_in_brackets():
    assert resolve_json_path(DOC["items"], "$[ 2 ].id") == 3
    assert resolve_json_path(DOC["items"], "[-3].name") == "first"


def test_root_paths():
    assert resolve_json_path(DOC, "$") is DOC
    assert resolve_json_path(DOC, "") is DOC
    assert resolve_json_path(DOC, []) is DOC


def test_missing_key_lists_keys_and_suggests():
    with pytest.raises(JsonPathError) as ei:
        resolve_json_path(DOC, "$.itemz[0]")
    msg = str(ei.value)
    assert "'itemz'" in msg and "available keys" in msg and '"items"' in msg
    assert "did you mean 'items'" in msg
    assert ei.value.segment == "itemz"


def test_missing_key_lists_only_first_twenty():
    doc = {f"k{i:03d}": i for i in range(100)}
    with pytest.raises(JsonPathError) as ei:
        resolve_json_path(doc, "nope")
    msg = str(ei.value)
    assert '"k019"' in msg and '"k020"' not in msg and "+80 more" in msg


def test_index_errors_give_array_length():
    with pytest.raises(JsonPathError) as ei:
        resolve_json_path(DOC, "items[7]")
    assert "array of 3 items" in str(ei.value) and "0..2" in str(ei.value)
    with pytest.raises(JsonPathError) as ei:
        resolve_json_path(DOC, "/items/first")
    assert "not an index" in str(ei.value)
    with pytest.raises(JsonPathError) as ei:
        resolve_json_path({"e": []}, "e[0]")
    assert "it is empty" in str(ei.value)


def test_descending_into_scalar_names_the_segment():
    with pytest.raises(JsonPathError) as ei:
        resolve_json_path(DOC, "a.b.c.d")
    assert "a.b.c" in str(ei.value) and "'d'" in str(ei.value) and "boolean" in str(ei.value)


@pytest.mark.parametrize("bad", ["a..b", "a[", "a[x]", 'a["unterminated', "a b", "a]", '$["k" x]', '$["\\q"]'])
def test_malformed_paths_raise_path_error(bad):
    with pytest.raises(JsonPathError):
        resolve_json_path(DOC, bad)


def test_non_string_path_is_rejected():
    with pytest.raises(JsonPathError):
        parse_path(3)  # type: ignore[arg-type]


def test_format_path_and_pointer():
    assert format_path(["result", "content", 0, "text"]) == "result.content[0].text"
    assert format_path([]) == "$"
    assert format_path([0, "a b", "x.y"]) == '[0]["a b"]["x.y"]'
    assert to_pointer(["a/b", "~", 0]) == "/a~1b/~0/0"


segments = st.lists(st.one_of(st.integers(min_value=-5, max_value=10**6), st.text(max_size=12)), max_size=6)


@settings(max_examples=300, deadline=None)
@given(segments)
def test_format_parse_roundtrip(segs):
    assert parse_path(format_path(segs)) == segs


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=8), min_size=1, max_size=5), st.integers())
def test_resolve_follows_formatted_and_pointer_paths(keys, value):
    doc: object = value
    for k in reversed(keys):
        doc = {k: doc}
    assert resolve_json_path(doc, format_path(keys)) == value
    assert resolve_json_path(doc, to_pointer(keys)) == value


def test_serialize_small_value_is_complete_json():
    r = serialize_bounded({"a": [1, 2]}, 1000)
    assert not r.truncated and r.note == ""
    assert json.loads(r.text) == {"a": [1, 2]}


def test_serialize_large_value_is_bounded_and_suggests_narrower_paths():
    r = serialize_bounded(list(range(100_000)), 300, path="$.nums")
    assert r.truncated and len(r.text) <= 300
    assert "nums[0]" in r.note and "nums[99999]" in r.note
    assert "not valid JSON" in r.text
    r = serialize_bounded({f"k{i}": "v" * 100 for i in range(50)}, 200, path="$")
    assert r.truncated and len(r.text) <= 200 and "k0" in r.note


def test_serialize_tiny_bound_and_unserializable_values():
    assert len(serialize_bounded("x" * 100, 5).text) <= 5
    assert serialize_bounded({1, 2}, 100).text.startswith('"{')  # default=repr, never raises
