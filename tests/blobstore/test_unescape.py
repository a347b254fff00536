"""unescape: text views out of JSON envelopes; lossless, path-addressable, never raises."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from stowage.blobstore.presentation.unescape import (
    extract_text_views,
    is_json_string_literal,
    text_views_in,
    unescape_json_string,
)
from stowage.blobstore.retrieval.jsonpath import resolve_json_path

OUTPUT = "".join(f"step {i}: compiling module_{i}.c\n" for i in range(100)) + "error: link failed\n"


def test_terminal_envelope_yields_the_output_unescaped():
    env = json.dumps({"output": OUTPUT, "exit_code": 1, "error": None})
    assert "\n" not in env  # the problem: one escaped line
    [view] = extract_text_views(env)
    assert view.path == "output" and view.pointer == "/output"
    assert view.text == OUTPUT
    assert view.line_count == 101
    assert not view.recovered
    assert view.segments == ("output",)


def test_nested_mcp_content_path():
    env = json.dumps({"result": {"content": [{"type": "text", "text": OUTPUT}], "isError": False}})
    [view] = extract_text_views(env)
    assert view.path == "result.content[0].text"
    assert view.pointer == "/result/content/0/text"
    assert resolve_json_path(json.loads(env), view.path) == OUTPUT
    assert resolve_json_path(json.loads(env), view.pointer) == OUTPUT


def test_threshold_and_newline_requirement():
    short = json.dumps({"output": "a\nb"})
    assert extract_text_views(short) == []
    assert len(extract_text_views(short, min_chars=1)) == 1
    one_line = json.dumps({"blob": "x" * 5000})
    assert extract_text_views(one_line) == []
    [v] = extract_text_views(one_line, require_newline=False)
    assert v.text == "x" * 5000 and v.line_count == 1


def test_several_views_in_document_order_and_capped():
    doc = {"stdout": OUTPUT, "meta": {"stderr": OUTPUT.upper()}, "logs": [OUTPUT[:600], OUTPUT[600:]]}
    views = extract_text_views(json.dumps(doc))
    assert [v.path for v in views] == ["stdout", "meta.stderr", "logs[0]", "logs[1]"]
    assert [v.path for v in extract_text_views(json.dumps(doc), max_views=2)] == ["stdout", "meta.stderr"]


def test_weird_keys_are_quoted_and_resolvable():
    doc = {"tool result": {"a.b": OUTPUT}}
    [v] = extract_text_views(json.dumps(doc))
    assert v.path == '["tool result"]["a.b"]'
    assert resolve_json_path(doc, v.path) == OUTPUT


def test_whole_value_string_literal():
    lit = json.dumps(OUTPUT)
    assert is_json_string_literal(lit)
    assert is_json_string_literal("  " + lit + "\n")
    assert unescape_json_string(lit) == OUTPUT
    [v] = extract_text_views(lit)
    assert v.path == "$" and v.pointer == "" and v.text == OUTPUT


def test_not_string_literals():
    for s in ['"a" "b"', '"abc', "abc", '"', "", '{"a": "b"}', '"bad \\q escape"']:
        assert not is_json_string_literal(s)
        assert unescape_json_string(s) is None


def test_truncated_envelope_is_salvaged():
    env = json.dumps({"exit_code": 1, "output": OUTPUT})
    cut = env[: len(env) - 300]
    [v] = extract_text_views(cut)
    assert v.recovered and v.path == "output" and v.segments == ("output",)
    assert OUTPUT.startswith(v.text) and len(v.text) > 1500


def test_truncated_mid_escape_is_salvaged():
    env = json.dumps({"output": OUTPUT + "caf\u00e9 \u2603"}, ensure_ascii=True)
    cut = env[: env.index("\\u00e9") + 3]  # cut inside \u00e9
    [v] = extract_text_views(cut)
    assert v.text.startswith(OUTPUT) and v.recovered


def test_garbage_and_hostile_inputs_do_not_raise():
    for s in ["", "{", "[" * 100_000, '{"a": "\\', "null", "12", "{}" * 10, '"\\ud800"', "\x00\x01"]:
        assert isinstance(extract_text_views(s), list)
    assert extract_text_views(None) == []  # type: ignore[arg-type]
    assert extract_text_views("[" * 200_000 + "]" * 200_000) == []


def test_oversized_input_is_skipped():
    env = json.dumps({"output": OUTPUT})
    assert extract_text_views(env, max_input_chars=100) == []


def test_text_views_in_parsed_doc_and_node_cap():
    doc = [{"i": i} for i in range(1000)] + [{"out": OUTPUT}]
    assert [v.path for v in text_views_in(doc)] == ["[1000].out"]
    assert text_views_in(doc, max_nodes=100) == []


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=30)
    | st.text(alphabet='ab\n\\"é', min_size=5, max_size=60),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_views_are_exactly_the_values_at_their_paths(doc):
    text = json.dumps(doc)
    for v in extract_text_views(text, min_chars=5):
        assert "\n" in v.text and len(v.text) >= 5
        assert resolve_json_path(doc, v.path) == v.text
        assert resolve_json_path(doc, v.pointer if v.pointer else "$") == v.text


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2000))
def test_never_raises_on_arbitrary_text(text):
    views = extract_text_views(text, min_chars=1)
    assert all(isinstance(v.text, str) for v in views)
