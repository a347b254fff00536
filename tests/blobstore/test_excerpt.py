"""build_excerpt: content-aware previews that respect the budget, are deterministic
and never raise."""

from __future__ import annotations

import base64
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stowage.blobstore.presentation.excerpt import Excerpt, build_excerpt
from stowage.blobstore.presentation.excerpt_json import top_level_shape

MARKER = re.compile(r"^… ([\d,]+) lines? omitted …$")
NUMBERED = re.compile(r"^ *(\d+)\|(?: (.*))?$")


def make_log(n: int, errors: dict[int, str] | None = None) -> str:
    rows = [f"[{i:05d}] INFO building target_{i} ... ok" for i in range(1, n + 1)]
    for ln, msg in (errors or {}).items():
        rows[ln - 1] = msg
    return "\n".join(rows) + "\n"


def numbered(ex: Excerpt) -> dict[int, str]:
    out = {}
    for line in ex.text.splitlines():
        m = NUMBERED.match(line)
        if m:
            out[int(m.group(1))] = m.group(2) or ""
    return out


def check_line_accounting(ex: Excerpt, source_lines: list[str]) -> None:
    """Numbers, ranges, markers and omitted counts agree with each other and the source."""
    shown = numbered(ex)
    assert sorted(shown) == [n for a, b in ex.shown_line_ranges for n in range(a, b + 1)]
    for n, text in shown.items():
        src = source_lines[n - 1]
        assert text == src or "…[" in text  # verbatim unless visibly clipped
    markers = [int(m.group(1).replace(",", "")) for m in map(MARKER.match, ex.text.splitlines()) if m]
    assert sum(markers) == ex.omitted_lines == len(source_lines) - len(shown)


# --- logs ---------------------------------------------------------------------


def test_log_keeps_head_tail_and_errors_in_the_middle():
    text = make_log(
        5000,
        {
            1200: "E       AssertionError: expected 3, got 4",
            2500: "Traceback (most recent call last):",
            2503: "ValueError: bad config value 'x'",
            3000: "WARNING: deprecated flag --foo",
            4000: "process exited with code 2",
        },
    )
    ex = build_excerpt(text, budget_chars=2000)
    assert ex.kind == "log" and ex.layout == "lines"
    assert ex.total_lines == 5000 and ex.total_chars == len(text)
    assert len(ex.text) <= 2000
    shown = numbered(ex)
    assert 1 in shown and 5000 in shown
    for ln in (1200, 2500, 2503, 4000):
        assert ln in shown, ln
    assert "1200| E       AssertionError: expected 3, got 4" in ex.text
    check_line_accounting(ex, text.splitlines())


def test_warnings_rank_below_errors():
    errs = {i: f"ERROR: failure number {i}" for i in range(100, 4000, 100)}
    errs[2050] = "WARNING: only a warning"
    ex = build_excerpt(make_log(5000, errs), budget_chars=1200, max_signal_lines=10)
    shown = numbered(ex)
    assert 2050 not in shown
    assert 100 in shown and 3900 in shown  # first and last errors first
    roomy = build_excerpt(make_log(5000, {2050: "WARNING: only a warning"}), budget_chars=4000)
    assert 2050 in numbered(roomy)


def test_small_output_is_shown_whole_without_markers():
    text = "$ make\ncc -o app app.c\nld: ok\n"
    ex = build_excerpt(text, budget_chars=2000)
    assert ex.omitted_lines == 0 and ex.shown_line_ranges == ((1, 3),)
    assert "omitted" not in ex.text
    assert ex.text.splitlines()[0] == "1| $ make"


def test_everything_is_shown_when_it_fits():
    text = "".join(f"row {i}\n" for i in range(1, 81))  # more than head + tail lines
    ex = build_excerpt(text, budget_chars=2000)
    assert ex.shown_line_ranges == ((1, 80),) and ex.omitted_lines == 0 and "omitted" not in ex.text


def test_plain_text_is_head_and_tail_only():
    rows = [f"Paragraph sentence number {i} of a calm story." for i in range(1, 1001)]
    rows[500] = "An error in the middle of prose should not be promoted."
    ex = build_excerpt("\n".join(rows), budget_chars=1500, kind="text")
    shown = numbered(ex)
    assert 1 in shown and 1000 in shown and 501 not in shown
    check_line_accounting(ex, rows)


def test_long_error_line_is_centred_on_the_error():
    line = "x" * 20_000 + " fatal: disk full " + "y" * 20_000
    text = make_log(300, {150: line})
    ex = build_excerpt(text, budget_chars=2000)
    shown = numbered(ex)
    assert "fatal: disk full" in shown[150] and shown[150].startswith("…[")


def test_ansi_and_carriage_returns_are_cleaned():
    text = "\x1b[31mERROR\x1b[0m red\n" + "progress 10%\rprogress 50%\rprogress 100%\n" + "done\n"
    ex = build_excerpt(text, budget_chars=500)
    assert "\x1b" not in ex.text and "1| ERROR red" in ex.text
    assert "2| progress 100%" in ex.text


def test_crlf_lines():
    ex = build_excerpt("a\r\nb\r\nc\r\n", budget_chars=100)
    assert ex.text == "1| a\n2| b\n3| c"


def test_huge_log_finds_a_lone_error_deep_in_the_middle():
    text = make_log(1_000_000, {600_000: "panic: runtime error: index out of range"})  # ~44 MB
    ex = build_excerpt(text, budget_chars=2000)
    assert 600_000 in numbered(ex) and ex.total_lines == 1_000_000
    check_line_accounting(ex, text.splitlines())


def test_signal_scan_cap_reads_both_ends_only():
    text = make_log(200_000, {5: "ERROR early", 100_000: "ERROR middle", 199_990: "ERROR late"})
    ex = build_excerpt(text, budget_chars=2000, scan_chars=2_000_000, head_lines=2, tail_lines=2)
    shown = numbered(ex)
    assert 5 in shown and 199_990 in shown and 100_000 not in shown


# --- JSON ---------------------------------------------------------------------


def test_json_document_shows_structure_not_a_dump():
    doc = {
        "status": "ok",
        "count": 1234,
        "items": [{"id": i, "name": f"item-{i}", "tags": ["a", "b"], "price": i * 1.5} for i in range(1234)],
        "meta": {"page": 1, "next": None, "cursor": "eyJ" + "A" * 500},
    }
    ex = build_excerpt(json.dumps(doc), budget_chars=1500)
    assert ex.kind == "json" and ex.layout == "json" and len(ex.text) <= 1500
    t = ex.text
    assert t.startswith("JSON object, 4 keys:")
    assert "items: array, 1,234 items of object {id, name, tags, price}" in t
    assert '[0]: {"id": 0, "name": "item-0"' in t and "[1233]:" in t and "… 1,231 items …" in t
    assert "next: null" in t and "(string, 503 chars)" in t
    assert '"id": 600' not in t


def test_json_outline_degrades_to_fit_small_budgets():
    doc = {f"key_{i}": {"nested": list(range(50)), "s": "v" * 100} for i in range(200)}
    for budget in (60, 200, 500, 1000, 3000):
        ex = build_excerpt(json.dumps(doc), budget_chars=budget)
        assert len(ex.text) <= budget and ex.layout == "json"
    ex = build_excerpt(json.dumps(doc), budget_chars=3000)
    assert "more keys" in ex.text


def test_json_envelope_shows_the_unescaped_output():
    out = make_log(400, {200: "FAILED tests/test_x.py::test_y - assert 1 == 2"})
    env = json.dumps({"output": out, "exit_code": 1, "error": None})
    ex = build_excerpt(env, budget_chars=2000)
    assert ex.layout == "json+lines" and ex.view_path == "output"
    assert "exit_code: 1" in ex.text and "(unescaped below)" in ex.text
    assert "output (unescaped, 400 lines):" in ex.text
    assert "200| FAILED tests/test_x.py::test_y" in ex.text
    assert "\\n" not in ex.text
    check_line_accounting(ex, out.splitlines())


def test_json_document_inside_an_mcp_text_block_is_outlined():
    inner = {"issues": [{"number": i, "title": f"Bug {i}", "state": "open"} for i in range(300)], "total": 300}
    env = json.dumps({"content": [{"type": "text", "text": json.dumps(inner)}], "isError": False})
    ex = build_excerpt(env, budget_chars=1500)
    assert ex.layout == "json+json" and ex.view_path == "content[0].text"
    assert "issues: array, 300 items of object {number, title, state}" in ex.text
    assert "total: 300" in ex.text and len(ex.text) <= 1500


def test_cut_off_envelope_previews_the_recovered_output():
    out = make_log(300, {100: "ERROR: link failed"})
    env = json.dumps({"exit_code": 1, "output": out})
    cut = env[: len(env) - 500]  # upstream size cap cut the JSON mid-string
    ex = build_excerpt(cut, budget_chars=1500)
    assert ex.kind == "json" and ex.layout == "json+lines" and ex.view_path == "output"
    assert ex.text.startswith("JSON, not valid (cut off?)")
    assert "100| ERROR: link failed" in ex.text and "\\n" not in ex.text


def test_json_string_literal_is_previewed_unescaped():
    out = make_log(300, {150: "ERROR boom"})
    ex = build_excerpt(json.dumps(out), budget_chars=1500)
    assert ex.kind == "json" and ex.view_path == "$" and ex.layout == "json+lines"
    assert ex.text.startswith("JSON string, ") and "150| ERROR boom" in ex.text


def test_jsonl_shows_count_first_and_last_records_and_errors():
    rows = [json.dumps({"ts": i, "level": "error" if i == 500 else "info", "msg": f"event {i}"}) for i in range(1000)]
    ex = build_excerpt("\n".join(rows), budget_chars=1000)
    assert ex.kind == "jsonl" and len(ex.text) <= 1000
    assert ex.text.startswith("JSONL, 1,000 lines; first record keys: {ts, level, msg}")
    shown = numbered(ex)
    assert {1, 2, 3, 998, 999, 1000, 501} <= set(shown)
    check_line_accounting(ex, rows)


# --- one huge line, binary ------------------------------------------------------


def test_unparseable_minified_json_gets_char_windows():
    doc = json.dumps({"rows": [{"i": i, "v": "x" * 30} for i in range(5000)]}, separators=(",", ":"))
    cut = doc[: len(doc) // 2]  # truncated upstream: not valid JSON any more
    ex = build_excerpt(cut, budget_chars=1000)
    assert ex.layout == "chars" and len(ex.text) <= 1000
    assert ex.text.startswith(f"[chars 0–{ex.shown_char_ranges[0][1]:,} of {len(cut):,}]")
    for s, e in ex.shown_char_ranges:
        assert cut[s:e] in ex.text
    assert ex.shown_char_ranges[-1][1] == len(cut)


def test_one_line_log_shows_the_error_window():
    blob = "INFO step ok; " * 5000 + "ERROR: out of disk space; " + "INFO retry ok; " * 5000
    ex = build_excerpt(blob, budget_chars=1200)
    assert ex.layout == "chars" and "ERROR: out of disk space" in ex.text
    assert len(ex.shown_char_ranges) == 3


def test_base64_blob_windows():
    b64 = base64.b64encode(bytes(range(256)) * 500).decode()
    ex = build_excerpt(b64, budget_chars=800)
    assert ex.layout == "chars" and ex.kind == "text" and len(ex.text) <= 800
    assert ex.text.count("[chars ") == 2 and "chars omitted" in ex.text


def test_binary_hex_preview():
    data = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 10
    ex = build_excerpt(data, budget_chars=600)
    assert ex.kind == "binary" and ex.layout == "hex" and ex.total_chars == len(data)
    assert ex.text.startswith(f"binary data, {len(data):,} bytes (PNG image)")
    assert "00000000  89 50 4e 47 0d 0a 1a 0a" in ex.text and "|.PNG........IHDR|" in ex.text
    assert "bytes omitted" in ex.text and len(ex.text) <= 600


def test_bytes_text_is_decoded_and_str_with_nul_is_binary():
    assert build_excerpt(b"hello\nworld\n").text == "1| hello\n2| world"
    assert build_excerpt("a\x00b" * 10).layout == "hex"


def test_empty_input():
    ex = build_excerpt("")
    assert ex.text == "(empty)" and ex.total_lines == 0 and ex.layout == "empty"


# --- guarantees ------------------------------------------------------------------


@pytest.mark.parametrize("budget", [0, 1, 5, 20, 50, 120, 300])
def test_tiny_budgets_are_respected(budget):
    inputs = [
        make_log(500, {250: "ERROR x"}),
        json.dumps({"a": list(range(1000))}),
        json.dumps({"output": make_log(100)}),
        "z" * 100_000,
        bytes(range(256)) * 4,
        "\n".join(json.dumps({"i": i}) for i in range(100)),
    ]
    for data in inputs:
        ex = build_excerpt(data, budget_chars=budget)
        assert len(ex.text) <= budget


def test_deterministic():
    inputs = [
        make_log(3000, {10: "ERROR a", 2000: "ERROR b"}),
        json.dumps({"b": [1.5, {"x": None}], "a": "s" * 300}),
        "q" * 50_000,
    ]
    for data in inputs:
        assert build_excerpt(data) == build_excerpt(data)


def test_garbage_arguments_do_not_raise():
    assert isinstance(build_excerpt(None), Excerpt)  # type: ignore[arg-type]
    assert isinstance(build_excerpt("abc", budget_chars="x"), Excerpt)  # type: ignore[arg-type]
    assert isinstance(build_excerpt("abc", kind="nonsense"), Excerpt)
    assert isinstance(build_excerpt("{" * 100_000, kind="json"), Excerpt)
    assert isinstance(build_excerpt("[" * 100_000 + "]" * 100_000), Excerpt)
    assert isinstance(build_excerpt("\ud800 lone surrogate\n" * 100, budget_chars=100), Excerpt)


log_lines = st.lists(
    st.one_of(
        st.text(max_size=120),
        st.sampled_from(["ERROR: x", "E   assert 1", "Traceback (most recent call last):", "warning: y", ""]),
    ),
    max_size=200,
)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=4000), budget=st.integers(min_value=0, max_value=3000))
def test_never_exceeds_budget_on_arbitrary_text(text, budget):
    ex = build_excerpt(text, budget_chars=budget)
    assert len(ex.text) <= budget
    assert build_excerpt(text, budget_chars=budget) == ex


@settings(max_examples=200, deadline=None)
@given(rows=log_lines, budget=st.integers(min_value=0, max_value=3000))
def test_never_exceeds_budget_on_loglike_text(rows, budget):
    text = "\n".join(rows)
    ex = build_excerpt(text, budget_chars=budget, kind="log")
    assert len(ex.text) <= budget
    if ex.layout == "lines" and budget >= 200 and ex.total_lines:
        assert ex.omitted_lines + sum(b - a + 1 for a, b in ex.shown_line_ranges) == ex.total_lines


json_docs = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False) | st.integers() | st.text(max_size=50),
    lambda c: st.lists(c, max_size=8) | st.dictionaries(st.text(max_size=10), c, max_size=8),
    max_leaves=60,
)


@settings(max_examples=200, deadline=None)
@given(doc=json_docs, budget=st.integers(min_value=0, max_value=2000))
def test_never_exceeds_budget_on_json(doc, budget):
    text = json.dumps(doc)
    ex = build_excerpt(text, budget_chars=budget)
    assert len(ex.text) <= budget
    assert build_excerpt(text, budget_chars=budget) == ex


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=3000), budget=st.integers(min_value=0, max_value=2000))
def test_never_exceeds_budget_on_bytes(data, budget):
    assert len(build_excerpt(data, budget_chars=budget).text) <= budget


# What each room of blobstore may import besides the standard library and
# ``regex``: its own modules, and for presentation the JSON path type of
# retrieval.  Storage (blobstore's top level) imports neither room.
ROOMS = {"presentation": {"presentation", "retrieval.jsonpath"}, "retrieval": {"retrieval"}}


def _relative_imports(path):
    import ast
    import sys

    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            tops = [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            tops = [(node.module or "").split(".")[0]]
        elif isinstance(node, ast.ImportFrom):
            yield node.level, node.module or ""
            continue
        else:
            continue
        for top in tops:
            assert top in sys.stdlib_module_names or top in ("__future__", "regex"), f"{path.name} imports {top}"


def test_presentation_and_retrieval_import_only_stdlib_regex_and_their_own_room():
    from pathlib import Path

    package = Path(__file__).resolve().parents[2] / "blobstore"
    for room, allowed in ROOMS.items():
        modules = sorted((package / room).glob("*.py"))
        assert len(modules) > 2, room
        for path in modules:
            for level, module in _relative_imports(path):
                target = f"{room}.{module}" if level == 1 else module
                assert level in (1, 2) and any(target == a or target.startswith(a + ".") for a in allowed), (
                    f"{room}/{path.name} imports {'.' * level}{module}"
                )


def test_storage_imports_neither_presentation_nor_retrieval():
    from pathlib import Path

    package = Path(__file__).resolve().parents[2] / "blobstore"
    for path in sorted(package.glob("*.py")):
        for level, module in _relative_imports(path):
            assert level == 1 and module.split(".")[0] not in ROOMS, f"{path.name} imports {'.' * level}{module}"


@pytest.mark.parametrize(
    "doc,shape",
    [
        ({"output": "x", "exit_code": 0}, "a JSON object with 2 keys: output, exit_code"),
        ({"only": 1}, "a JSON object with 1 key: only"),
        ({f"k{i}": i for i in range(9)}, "a JSON object with 9 keys: k0, k1, k2, k3, k4, k5, …"),
        ({"a key": 1}, 'a JSON object with 1 key: "a key"'),
        ({}, "an empty JSON object"),
        (list(range(1200)), "a JSON array of 1,200 items"),
        ([1], "a JSON array of 1 item"),
        ([], "an empty JSON array"),
        ("text", "a JSON string"),
    ],
)
def test_json_excerpts_name_the_top_level_shape(doc, shape):
    assert build_excerpt(json.dumps(doc) + " " * 3000, budget_chars=400).shape == shape


def test_json_scalars_have_a_shape_too():
    assert [top_level_shape(v) for v in (3.5, True, None)] == ["a JSON number", "a JSON boolean", "JSON null"]


def test_one_line_strings_are_counted_in_the_singular():
    ex = build_excerpt(json.dumps("one line " * 400), budget_chars=400)
    assert ex.text.startswith("JSON string, 3,600 chars, 1 line when unescaped:")
    assert build_excerpt("plain text " * 400, budget_chars=400).shape == ""
