from __future__ import annotations

import pytest

from stowage.tool_search import decide, estimate_tokens, is_deferrable, normalize_mode, split_deferrable
from stowage.tool_search.activation import UNKNOWN_CONTEXT_THRESHOLD_TOKENS, schema_tokens

from .catalogs import tool

CORE = frozenset({"terminal", "read_file", "clarify"})


def schemas_of(total_chars: int, n: int = 4) -> list[dict]:
    """n deferrable schemas whose compact JSON adds up to roughly total_chars."""
    base = len(str(tool("t0", ""))) // 2
    return [tool(f"plugin_tool_{i}", "x" * max(1, total_chars // n - base)) for i in range(n)]


def test_deferrable_predicate():
    assert is_deferrable("mcp__github__create_issue", core_names=CORE)
    assert not is_deferrable("terminal", core_names=CORE)
    assert not is_deferrable("dummy_web_fetch", core_names=CORE, never_defer={"dummy_web_fetch"})
    assert not is_deferrable("stowage_tool_search", core_names=CORE)
    assert not is_deferrable("stowage_fetch", core_names=CORE)  # any Stowage tool
    assert not is_deferrable("my_engine_tool", core_names=CORE, own_names={"my_engine_tool"})
    assert not is_deferrable("", core_names=CORE)


def test_split_keeps_input_order_and_accepts_wrapped_schemas():
    tools = [tool("terminal"), {"type": "function", "function": tool("mcp__x__a")}, tool("clarify"), tool("b")]
    visible, deferrable = split_deferrable(tools, core_names=CORE, never_defer=["b"])
    assert [t.get("name") or t["function"]["name"] for t in visible] == ["terminal", "clarify", "b"]
    assert deferrable == [tools[1]]


@pytest.mark.parametrize(
    "mode, expected",
    [
        ("auto", "auto"),
        ("ON", "on"),
        (" off ", "off"),
        ("preselect", "preselect"),
        (True, "on"),
        (False, "off"),
        ("yes", "on"),
        ("0", "off"),
        (None, "auto"),
        ("bogus", "auto"),
    ],
)
def test_normalize_mode(mode, expected):
    assert normalize_mode(mode) == expected


def test_auto_threshold_is_a_share_of_the_context_window():
    tools = [tool("terminal", "core " * 5000)] + schemas_of(40_000)  # ~10k tokens deferrable
    tokens = schema_tokens(split_deferrable(tools, core_names=CORE)[1])
    assert 9_000 < tokens < 11_000
    # Core tools never count towards the threshold.
    below = decide(tools, context_length=tokens * 10 + 100, core_names=CORE)  # 10% is just above
    assert not below.active and below.threshold_tokens > tokens
    at = decide(tools, context_length=tokens * 10, core_names=CORE)
    assert at.active and at.deferrable_tokens == tokens == at.threshold_tokens
    assert at.deferrable_names == tuple(f"plugin_tool_{i}" for i in range(4))
    assert decide(tools, context_length=tokens * 2, core_names=CORE, threshold_pct=60).active is False
    assert decide(tools, context_length=tokens * 2, core_names=CORE, threshold_pct=50).active is True


def test_threshold_pct_is_clamped_and_zero_means_always():
    tools = schemas_of(400)
    assert decide(tools, context_length=1_000_000, core_names=CORE, threshold_pct=0).active
    assert not decide(tools, context_length=1_000, core_names=CORE, threshold_pct=500).active


def test_unknown_context_uses_fixed_cutoff():
    small = decide(schemas_of(4_000), context_length=None, core_names=CORE)
    assert not small.active and small.threshold_tokens == UNKNOWN_CONTEXT_THRESHOLD_TOKENS
    big = decide(schemas_of(4 * UNKNOWN_CONTEXT_THRESHOLD_TOKENS + 400), context_length=0, core_names=CORE)
    assert big.active


def test_token_counter_is_injected():
    calls: list[str] = []

    def count(text: str) -> int:
        calls.append(text)
        return 1_000_000

    d = decide(schemas_of(100), context_length=200_000, core_names=CORE, count_tokens=count)
    assert d.active and d.deferrable_tokens == 1_000_000 and len(calls) == 1
    assert estimate_tokens("abcd" * 10) == 10 and estimate_tokens("abcde") == 2


def test_modes():
    tiny = schemas_of(100)
    assert decide(tiny, mode="on", context_length=1_000_000, core_names=CORE).active
    assert not decide(schemas_of(10**6), mode="off", context_length=1_000, core_names=CORE).active
    assert not decide([tool("terminal")], mode="on", context_length=10, core_names=CORE).active  # nothing to defer
    pre = decide(schemas_of(100_000), mode="preselect", context_length=100_000, core_names=CORE)
    assert pre.active and pre.preselect and pre.mode == "preselect"
    auto = decide(schemas_of(100_000), context_length=100_000, core_names=CORE)
    assert auto.active and not auto.preselect
    # preselect follows the auto threshold: below it nothing is deferred.
    assert not decide(tiny, mode="preselect", context_length=1_000_000, core_names=CORE).active


def test_never_defer_removes_tools_from_the_count():
    tools = schemas_of(40_000)
    names = [t["name"] for t in tools]
    d = decide(tools, context_length=100_000, core_names=CORE, never_defer=names[1:])
    assert d.deferrable_names == (names[0],)
    assert not d.active
