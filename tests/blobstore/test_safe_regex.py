"""safe_regex: refusals with clear errors, timeouts, windowed long-subject search,
and a catalog of ReDoS patterns run under a hang guard."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stowage.blobstore.retrieval.regex_budget import estimate_expansion
from stowage.blobstore.retrieval.safe_regex import (
    PatternError,
    PatternSyntaxError,
    PatternTimeoutError,
    PatternTooComplexError,
    PatternTooLongError,
    compile_user_pattern,
)

WATCHDOG_S = 30  # hang guard, not a performance bound


# --- refusals ---------------------------------------------------------------


def test_too_long_pattern():
    with pytest.raises(PatternTooLongError) as ei:
        compile_user_pattern("a" * 257)
    assert "257 chars" in str(ei.value) and "256" in str(ei.value)
    compile_user_pattern("a" * 256)
    with pytest.raises(PatternTooLongError):
        compile_user_pattern("abc", max_len=2)


def test_invalid_syntax_carries_regex_message_and_position():
    with pytest.raises(PatternSyntaxError) as ei:
        compile_user_pattern("foo(bar")
    err = ei.value
    assert err.position == 7 and "missing )" in err.reason
    assert "position 7" in str(err) and "literal=True" in str(err)
    with pytest.raises(PatternSyntaxError) as ei:
        compile_user_pattern("a{2,1}")
    assert "min repeat greater than max repeat" in str(ei.value)


def test_nul_and_empty_and_non_string_are_rejected():
    with pytest.raises(PatternSyntaxError) as ei:
        compile_user_pattern("ab\x00c")
    assert ei.value.position == 2 and "NUL" in str(ei.value)
    with pytest.raises(PatternSyntaxError, match="empty pattern"):
        compile_user_pattern("")
    with pytest.raises(PatternSyntaxError):
        compile_user_pattern(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "bomb", ["((a{1000}){1000}){1000}", "a{100000}", "(?:x{200}){200}", "[ab]{20000}", r"\d{5000}\w{5000}x{5000}"]
)
def test_compile_time_repeat_bombs_are_refused_before_compiling(bomb):
    with pytest.raises(PatternTooComplexError) as ei:
        compile_user_pattern(bomb)
    assert "counted repeats" in str(ei.value)


def test_expansion_estimate():
    assert estimate_expansion("abc") == 3
    assert estimate_expansion("a{10}") == 10
    assert estimate_expansion("(ab){10}") == 20
    assert estimate_expansion("((a{10}){10}){10}") == 1000
    assert estimate_expansion(r"[a{9999}]") == 1  # braces inside a class are literal
    assert estimate_expansion(r"\x{41}{3}") == 3
    assert estimate_expansion("a{,5}") == 5
    assert estimate_expansion("a{x}") == 4  # not a quantifier
    assert estimate_expansion("(a|bc){4}") == 12
    assert estimate_expansion("((a") >= 1  # unbalanced never crashes


def test_errors_share_a_base_class():
    for cls in (PatternTooLongError, PatternSyntaxError, PatternTooComplexError, PatternTimeoutError):
        assert issubclass(cls, PatternError) and issubclass(cls, ValueError)


# --- matching ---------------------------------------------------------------


def test_literal_and_ignore_case():
    p = compile_user_pattern("a.b(c)*", literal=True)
    assert p.search("xx a.b(c)* yy").span() == (3, 10)
    assert p.search("aXb") is None
    q = compile_user_pattern("error", ignore_case=True)
    assert q.search("An ERROR here") is not None
    assert compile_user_pattern("error").search("An ERROR here") is None
    assert compile_user_pattern("two words", literal=True).search("two words").group() == "two words"


def test_long_line_is_searched_in_windows_with_absolute_offsets():
    p = compile_user_pattern("needle", window_chars=1000, overlap_chars=100)
    line = "x" * 250_000 + "needle" + "y" * 10
    m = p.search(line)
    assert m is not None and m.span() == (250_000, 250_006)
    # a match straddling a window edge is still found
    for start in range(990, 1001):
        s = "z" * start + "needle" + "z" * 3000
        assert p.search(s).span() == (start, start + 6)


def test_window_edges_do_not_fake_anchors():
    p = compile_user_pattern(r"x$", window_chars=100, overlap_chars=20)
    line = "x" * 1000
    assert [m.span() for m in p.finditer(line)] == [(999, 1000)]
    p = compile_user_pattern(r"ab\b", window_chars=50, overlap_chars=10)
    line = "ab" * 500
    assert list(p.finditer(line))[-1].span() == (998, 1000)
    assert len(list(p.finditer(line))) == 1


def test_empty_matches_advance():
    p = compile_user_pattern("a*", window_chars=16, overlap_chars=4)
    spans = [m.span() for m in p.finditer("baab")]
    assert spans == [(0, 0), (1, 3), (3, 3), (4, 4)] or spans == [(0, 0), (1, 3), (4, 4)]


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="abc\n", max_size=400),
    needle=st.text(alphabet="abc", min_size=1, max_size=4),
    window=st.integers(min_value=16, max_value=64),
)
def test_windowed_finditer_agrees_with_re(text, needle, window):
    p = compile_user_pattern(needle, literal=True, window_chars=window, overlap_chars=8)
    got = [m.span() for m in p.finditer(text)]
    want = [m.span() for m in re.finditer(re.escape(needle), text)]
    assert got == want


def test_catastrophic_pattern_times_out_with_advice():
    p = compile_user_pattern("(a+)+$", timeout_s=0.05)
    with pytest.raises(PatternTimeoutError) as ei:
        p.search("a" * 5000 + "!")
    err = ei.value
    assert not err.budget_exhausted
    assert "catastrophically" in str(err) and "literal=True" in str(err)


def test_spent_deadline_is_reported_as_budget_exhaustion():
    p = compile_user_pattern("abc")
    with pytest.raises(PatternTimeoutError) as ei:
        p.search("xxabc", deadline=time.monotonic() - 1)
    assert ei.value.budget_exhausted


# --- ReDoS catalog ------------------------------------------------------------

ADVERSARIAL = [
    "a" * 5000 + "!",
    "a" * 30 + "b",
    "x" * 5000,
    ("aaaa " * 1000) + "!",
    "ab" * 3000 + "c",
    "a" * 200_000,
    "\u00e9" * 3000 + "\x01",
]

CATALOG = [
    "(a+)+$",
    "(a|aa)+$",
    "(.*a){25}",
    r"^(\w+\s?)*$",
    "(x+x+)+y",
    "(a|a?)+$",
    "(a*)*b",
    "((a+)+)+b",
    r"(\w|\d)+$",
    r"^(a+)\1*$",
    r"(a*)*\1$",
    r"^((a+)\2)+$",
    r"(.+)+\1\1\1!",
    "(?:a|b|ab)*c",
    "(" + "|".join("a" * i for i in range(1, 40)) + ")+$",
    "|".join(f"w{i:03d}" for i in range(50)),
    "(.*,){12}X",
    r"^(([a-z])+.)+[A-Z]([a-z])+$",
    r"(\s*\w*)*!",
    "(?:a{1,30}){1,30}$",
    "(a{2,}){2,}b",
    "((a{1000}){1000}){1000}",
    "a" * 300,
    "(a(b",
    "a\x00b",
    "(?i)(é+)+\x02",
    r"(?:(?:(?:(?:a*)*)*)*)*b",
    "(a|b|ab)*?c",
    "(a++)+b",
]

_RUNNER = r"""
import json, sys
from stowage.blobstore.retrieval.safe_regex import compile_user_pattern, PatternError
from stowage.blobstore.retrieval.grep import grep_lines, grep_text_windows
pattern, inputs = json.loads(sys.stdin.read())
out = []
try:
    p = compile_user_pattern(pattern, timeout_s=0.2)
except PatternError as e:
    print(json.dumps({"compile_error": type(e).__name__, "message": str(e)}))
    raise SystemExit(0)
for text in inputs:
    r = grep_lines([text, "plain line", text], p, time_budget_s=1.0)
    w = grep_text_windows(text, p, time_budget_s=1.0)
    out.append([r.reason, r.note, w.reason, w.note])
print(json.dumps({"results": out}))
"""


@pytest.mark.parametrize("pattern", CATALOG, ids=[repr(p)[:40] for p in CATALOG])
def test_redos_catalog_never_hangs(pattern):
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _RUNNER],
            input=json.dumps([pattern, ADVERSARIAL]),
            capture_output=True,
            text=True,
            timeout=WATCHDOG_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"pattern {pattern!r} hung for {WATCHDOG_S}s")
    assert proc.returncode == 0, proc.stderr
    outcome = json.loads(proc.stdout)
    if "compile_error" in outcome:
        assert outcome["compile_error"] in {"PatternTooLongError", "PatternSyntaxError", "PatternTooComplexError"}
        assert outcome["message"]
        return
    for line_reason, line_note, win_reason, win_note in outcome["results"]:
        for reason, note in ((line_reason, line_note), (win_reason, win_note)):
            assert reason in (None, "match_cap", "time_budget", "pattern_timeout")
            if reason == "pattern_timeout":
                assert "literal=True" in note and "catastrophically" in note
            if reason == "time_budget":
                assert "budget" in note
