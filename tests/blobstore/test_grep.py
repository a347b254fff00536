"""grep_lines / grep_text_windows: context, merging, caps, streaming, agreement with re."""

from __future__ import annotations

import re
import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from stowage.blobstore.retrieval.grep import grep_lines, grep_text_windows
from stowage.blobstore.retrieval.safe_regex import compile_user_pattern


def lines(n: int, hits: dict[int, str]) -> list[str]:
    return [hits.get(i, f"line {i}") for i in range(1, n + 1)]


def test_context_and_merged_windows():
    text = lines(100, {10: "ERROR one", 12: "error two", 50: "error three"})
    r = grep_lines(text, compile_user_pattern("error", ignore_case=True), context=2)
    assert r.match_count == 3 and r.scanned_lines == 100 and not r.truncated and r.reason is None
    assert [(h.start, h.end) for h in r.hunks] == [(8, 14), (48, 52)]
    assert [ln.lineno for ln in r.matches] == [10, 12, 50]
    first = r.hunks[0]
    assert [ln.lineno for ln in first.lines] == list(range(8, 15))
    assert [ln.is_match for ln in first.lines] == [False, False, True, False, True, False, False]
    rendered = r.render()
    assert "10: ERROR one" in rendered and " 9- line 9" in rendered and "\n--\n" in rendered


def test_adjacent_windows_merge_only_when_contiguous():
    p = compile_user_pattern("hit")
    # gap of exactly 2*context lines between matches: windows touch -> one hunk
    r = grep_lines(lines(30, {5: "hit", 10: "hit"}), p, context=2)
    assert [(h.start, h.end) for h in r.hunks] == [(3, 12)]
    # one more line of gap -> still adjacent (7..8 then 9?) no: 5+2=7, 11-2=9 -> line 8 missing
    r = grep_lines(lines(30, {5: "hit", 11: "hit"}), p, context=2)
    assert [(h.start, h.end) for h in r.hunks] == [(3, 7), (9, 13)]


def test_context_zero_and_edges_of_input():
    p = compile_user_pattern("hit")
    r = grep_lines(lines(5, {1: "hit", 5: "hit"}), p, context=0)
    assert [(h.start, h.end) for h in r.hunks] == [(1, 1), (5, 5)]
    r = grep_lines(lines(5, {1: "hit", 5: "hit"}), p, context=3)
    assert [(h.start, h.end) for h in r.hunks] == [(1, 5)]
    assert grep_lines([], p).hunks == ()


def test_numbered_pairs_and_newline_stripping():
    p = compile_user_pattern("b$")
    r = grep_lines([(101, "a\n"), (102, "b\r\n"), (103, "c\n")], p, context=1)
    assert [(ln.lineno, ln.text, ln.is_match) for ln in r.hunks[0].lines] == [
        (101, "a", False),
        (102, "b", True),
        (103, "c", False),
    ]
    r = grep_lines(["x\n", "b\n"], p, start_line=41, context=0)
    assert r.matches[0].lineno == 42


def test_match_cap_truncates_after_trailing_context():
    p = compile_user_pattern("hit")
    r = grep_lines(lines(100, {i: "hit" for i in range(1, 101, 3)}), p, context=1, max_matches=5)
    assert r.truncated and r.reason == "match_cap" and r.match_count == 5
    assert r.hunks[-1].end == 14  # last match 13 plus one line of context
    assert "stopped after 5 matches" in r.note
    # reaching the cap on the very last line is not a truncation
    r = grep_lines(lines(10, {10: "hit"}), p, max_matches=1)
    assert not r.truncated


def test_time_budget_zero_stops_immediately():
    r = grep_lines(lines(1000, {}), compile_user_pattern("line"), time_budget_s=0)
    assert r.truncated and r.reason == "time_budget" and r.scanned_lines == 0
    assert "budget" in r.note


def test_pattern_timeout_keeps_partial_results():
    p = compile_user_pattern("(a+)+$", timeout_s=0.05)
    r = grep_lines(["aa", "x", "a" * 5000 + "!", "aa"], p, context=0, time_budget_s=30)
    assert r.truncated and r.reason == "pattern_timeout"
    assert [m.lineno for m in r.matches] == [1]
    assert r.scanned_lines == 2
    assert "line 3" in r.note and "literal=True" in r.note


def test_long_lines_are_clipped_around_the_match():
    line = "x" * 5000 + "NEEDLE" + "y" * 3000
    r = grep_lines([line], compile_user_pattern("NEEDLE"), max_line_chars=100)
    [m] = r.matches
    assert len(m.text) == 100 and "NEEDLE" in m.text
    assert m.text == line[m.col : m.col + 100]
    assert m.cut_before == m.col and m.cut_before + 100 + m.cut_after == len(line)
    assert m.match == (5000, 5006)
    assert "…[" in r.render()


def test_streams_a_100mb_iterator_in_bounded_memory():
    filler = "." * 1000

    def gen():
        for i in range(100_000):  # ~100 MB of text in total, produced lazily
            yield f"{i:08d} {'HIT' if i % 10_000 == 0 else 'ok'} {filler}"

    tracemalloc.start()
    try:
        r = grep_lines(gen(), compile_user_pattern("HIT"), context=2, max_matches=1000, time_budget_s=600)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r.scanned_lines == 100_000 and r.match_count == 10 and not r.truncated
    assert peak < 8 * 1024 * 1024  # a few shown lines, never the whole stream


@settings(max_examples=300, deadline=None)
@given(
    text_lines=st.lists(st.text(alphabet="abc", max_size=8), max_size=60),
    needle=st.text(alphabet="abc", min_size=1, max_size=3),
    context=st.integers(min_value=0, max_value=3),
)
def test_agrees_with_naive_re_reference(text_lines, needle, context):
    r = grep_lines(text_lines, compile_user_pattern(needle, literal=True), context=context, max_matches=10_000)
    want = [i for i, s in enumerate(text_lines, 1) if re.search(re.escape(needle), s)]
    assert [m.lineno for m in r.matches] == want
    shown = [ln.lineno for h in r.hunks for ln in h.lines]
    expected_shown = sorted({j for i in want for j in range(i - context, i + context + 1) if 1 <= j <= len(text_lines)})
    assert shown == expected_shown
    for h in r.hunks:
        assert [ln.lineno for ln in h.lines] == list(range(h.start, h.end + 1))
        assert all(ln.text == text_lines[ln.lineno - 1] for ln in h.lines)
    for a, b in zip(r.hunks, r.hunks[1:], strict=False):
        assert b.start > a.end + 1  # separate hunks never touch


def test_text_windows_give_offsets_and_merge():
    text = "a" * 1000 + "error" + "b" * 100 + "error" + "c" * 1000 + "error"
    r = grep_text_windows(text, compile_user_pattern("error"), window=20)
    assert r.match_count == 3 and r.total_chars == len(text) and not r.truncated
    assert [w.matches for w in r.windows] == [((1000, 1005),), ((1105, 1110),), ((2110, 2115),)]
    for w in r.windows:
        assert text[w.start : w.end] == w.text
    merged = grep_text_windows(text, compile_user_pattern("error"), window=80)
    assert len(merged.windows) == 2 and merged.windows[0].matches == ((1000, 1005), (1105, 1110))
    assert "[chars 920–1,190]" in merged.render()


def test_text_windows_cap_and_huge_match():
    text = "x1 " * 1000
    r = grep_text_windows(text, compile_user_pattern("x1"), window=2, max_matches=10)
    assert r.truncated and r.reason == "match_cap" and r.match_count == 10
    huge = grep_text_windows("q" * 1_000_000, compile_user_pattern("q+"), window=50)
    [w] = huge.windows
    assert w.matches == ((0, 1_000_000),) and len(w.text) <= 150


def test_text_windows_pattern_timeout():
    p = compile_user_pattern("(a|aa)+$", timeout_s=0.05)
    r = grep_text_windows("a" * 5000 + "!", p, time_budget_s=30)
    assert r.truncated and r.reason == "pattern_timeout" and "literal=True" in r.note


# --- lines split into pieces (a reader's max_line_bytes) ----------------------------


def test_pieces_of_one_line_form_one_line_with_whole_line_offsets():
    items = [(1, "a"), (2, "xx"), (2, "yNEEDLEy"), (2, "zz"), (3, "b")]
    r = grep_lines(items, compile_user_pattern("NEEDLE"), context=1)
    assert r.scanned_lines == 3 and r.match_count == 1
    [hunk] = r.hunks
    assert [ln.lineno for ln in hunk.lines] == [1, 2, 3]
    hit = hunk.lines[1]
    assert hit.match == (3, 9) and hit.col == 2 and hit.cut_before == 2 and hit.cut_after == 2
    assert hit.render() == "2: …[2 chars] yNEEDLEy …[2 chars]"


def test_piece_context_line_is_upgraded_when_a_later_piece_matches():
    items = [(1, "a"), (2, "p1"), (2, "hit"), (3, "b"), (4, "c")]
    r = grep_lines(items, compile_user_pattern("hit"), context=1)
    [hunk] = r.hunks
    assert [(ln.lineno, ln.is_match) for ln in hunk.lines] == [(1, False), (2, True), (3, False)]
    # after-context line whose later piece matches
    items = [(1, "hit"), (2, "ctx"), (2, "hit again"), (3, "x"), (4, "y")]
    r = grep_lines(items, compile_user_pattern("hit"), context=1)
    [hunk] = r.hunks
    assert [(ln.lineno, ln.is_match) for ln in hunk.lines] == [(1, True), (2, True), (3, False)]
    assert hunk.lines[1].cut_before == 3 and r.match_count == 2


def test_only_the_first_matching_piece_counts_and_context_lines_grow_cut_after():
    items = [(1, "hit"), (1, "hit"), (1, "hit"), (2, "c1"), (2, "c2"), (3, "z")]
    r = grep_lines(items, compile_user_pattern("hit"), context=1)
    assert r.match_count == 1 and r.scanned_lines == 3
    first, ctx = r.hunks[0].lines
    assert first.cut_after == 6 and ctx.text == "c1" and ctx.cut_after == 2


def test_pieces_with_context_zero_and_after_match_cap():
    items = [(1, "aa"), (1, "hit"), (2, "hit"), (2, "hit"), (3, "hit")]
    r = grep_lines(items, compile_user_pattern("hit"), context=0, max_matches=2)
    assert [m.lineno for m in r.matches] == [1, 2]
    assert r.truncated and r.reason == "match_cap"


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(st.lists(st.text(alphabet="abc", max_size=6), min_size=1, max_size=3), max_size=40),
    needle=st.text(alphabet="abc", min_size=1, max_size=2),
    context=st.integers(min_value=0, max_value=3),
)
def test_split_lines_agree_with_a_per_piece_reference(pieces, needle, context):
    items = [(i, p) for i, parts in enumerate(pieces, 1) for p in parts]
    r = grep_lines(items, compile_user_pattern(needle, literal=True), context=context, max_matches=10_000)
    want = [i for i, parts in enumerate(pieces, 1) if any(needle in p for p in parts)]
    assert [m.lineno for m in r.matches] == want
    shown = [ln.lineno for h in r.hunks for ln in h.lines]
    assert shown == sorted({j for i in want for j in range(i - context, i + context + 1) if 1 <= j <= len(pieces)})
    assert r.scanned_lines == len(pieces)
    for h in r.hunks:
        for ln in h.lines:
            whole = "".join(pieces[ln.lineno - 1])
            assert whole[ln.col : ln.col + len(ln.text)] == ln.text
            assert ln.cut_before + len(ln.text) + ln.cut_after == len(whole)
            if ln.match:
                assert whole[ln.match[0] : ln.match[1]] == needle
