"""Every stowage_fetch / stowage_grep input is answered with a JSON object, never an exception.

Models write whatever they write: ``1e309`` parses as infinity, paths arrive as
lists, patterns as numbers, JSON documents nest thousands of levels deep.  The
tools must answer each with ``{"error": ...}`` (or a result), bounded in size.
"""

from __future__ import annotations

import itertools
import json

import pytest

from stowage.blobstore import BlobStore
from stowage.context_engine.store_session.fetch_tools import FETCH, GREP, FetchLimits, FetchTools

pytestmark = pytest.mark.reliability

HOSTILE_NUMBERS = [
    float("inf"),
    float("-inf"),
    float("nan"),
    1e309,
    -1e309,
    10**400,
    -(10**400),
    2**63,
    "1e309",
    "9" * 5000,
    "nan",
    "",
    " ",
    "0x10",
    [],
    {},
    None,
    True,
    2.5,
    -1,
    0,
]
HOSTILE_TEXT = [
    5,
    1.5,
    float("nan"),
    None,
    True,
    [],
    ["a"],
    {"a": 1},
    "",
    "\x00",
    "../../etc/passwd",
    "a" * 100_000,
    "(a+)+$",
    "[",
    "$" + ".a" * 5000,
    "/" * 3000,
]


@pytest.fixture
def tools(tmp_path):
    store = BlobStore(tmp_path / "store")
    handles = {
        "text": store.put(
            "\n".join(f"line {i} \u2028 x" for i in range(3000)), session_id="s", tool_name="t", kind="spill"
        ).handle,
        "deep": store.put("[" * 200_000 + "]" * 200_000, session_id="s", tool_name="t", kind="spill").handle,
        "deep_obj": store.put('{"a":' * 5000 + "1" + "}" * 5000, session_id="s", tool_name="t", kind="spill").handle,
        "json": store.put(
            json.dumps({"items": [{"name": i} for i in range(50)]}), session_id="s", tool_name="t", kind="spill"
        ).handle,
        "binary": store.put(bytes(range(256)) * 100, session_id="s", tool_name="t", kind="spill").handle,
    }
    return FetchTools(store, lambda: "s", FetchLimits()), handles


def answer(tools: FetchTools, name: str, args) -> dict:
    reply = tools.handle(name, args)  # must not raise
    data = json.loads(reply)
    assert isinstance(data, dict)
    full = isinstance(args, dict) and args.get("mode") == "full"
    text = "".join(str(v) for v in data.values())
    assert len(text) <= (tools.limits.full_fetch_max_chars if full else tools.limits.fetch_max_chars) + 2000, (
        args if len(str(args)) < 200 else str(args)[:200],
        len(text),
    )
    return data


def fetch_cases(handles: dict[str, str]):
    for handle in handles.values():
        for mode in ("stat", "range", "grep", "json", "full"):
            yield {"handle": handle, "mode": mode}
        for key, value in itertools.product(("start", "count"), HOSTILE_NUMBERS):
            yield {"handle": handle, "mode": "range", key: value}
            yield {"handle": handle, "mode": "range", "unit": "chars", key: value}
        for key, value in itertools.product(("context", "max_matches"), HOSTILE_NUMBERS):
            yield {"handle": handle, "mode": "grep", "pattern": "line", key: value}
        for value in HOSTILE_TEXT:
            yield {"handle": handle, "mode": "json", "path": value}
            yield {"handle": handle, "mode": "grep", "pattern": value}
            yield {"handle": handle, "mode": value}
            yield {"handle": handle, "mode": "range", "unit": value}
    for value in HOSTILE_TEXT + HOSTILE_NUMBERS:
        yield {"handle": value}


def grep_cases():
    for value in HOSTILE_TEXT:
        yield {"pattern": value}
        yield {"pattern": "line", "kind": value}
        yield {"pattern": "line", "cursor": value}
    for value in HOSTILE_NUMBERS:
        yield {"pattern": "line", "cursor": value}
    for key, value in itertools.product(("context", "max_results"), HOSTILE_NUMBERS):
        yield {"pattern": "line", key: value}


def test_every_hostile_input_is_answered_with_json(tools, figures):
    ft, handles = tools
    cases = raised = errors = 0
    failures = []
    for name, args in (
        [(FETCH, a) for a in fetch_cases(handles)]
        + [(GREP, a) for a in grep_cases()]
        + [(FETCH, "not an object"), (FETCH, ["a"]), (FETCH, None), ("stowage_nope", {})]
    ):
        cases += 1
        try:
            data = answer(ft, name, args)
        except Exception as exc:  # noqa: BLE001 - counted and reported
            raised += 1
            failures.append(f"{name} {str(args)[:80]} -> {type(exc).__name__}: {exc}"[:200])
            continue
        errors += "error" in data
    figures.update(cases=cases, raised=raised, error_replies=errors)
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize("value", [float("inf"), 1e309, float("nan"), -float("inf")])
@pytest.mark.parametrize("key", ["start", "count"])
def test_non_finite_range_numbers_name_the_key(tools, key, value):
    ft, handles = tools
    data = answer(ft, FETCH, {"handle": handles["text"], "mode": "range", key: value})
    assert key in data["error"] and "whole number" in data["error"]


def test_huge_start_is_past_the_end_not_an_overflow(tools):
    ft, handles = tools
    assert "past the end" in answer(ft, FETCH, {"handle": handles["text"], "mode": "range", "start": 10**400})["error"]
    chars = answer(ft, FETCH, {"handle": handles["text"], "mode": "range", "unit": "chars", "start": 10**400})
    assert chars.get("text", "") == "" and chars.get("next_start") is None


@pytest.mark.parametrize("which", ["deep", "deep_obj"])
def test_deeply_nested_json_is_an_error_not_a_recursion_error(tools, which):
    ft, handles = tools
    data = answer(ft, FETCH, {"handle": handles[which], "mode": "json"})
    assert "nested too deeply" in data["error"]


def test_non_string_json_path_is_refused(tools):
    ft, handles = tools
    for path in (5, ["items"], {"a": 1}):
        data = answer(ft, FETCH, {"handle": handles["json"], "mode": "json", "path": path})
        assert "path must be a string" in data["error"]
