"""The batch prefilter never changes grep results, only skips work."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stowage.blobstore.retrieval.grep import grep_lines
from stowage.blobstore.retrieval.grep_prefilter import PrefilterStats, batch_pattern, prefiltered_lines
from stowage.blobstore.retrieval.safe_regex import compile_user_pattern


def batches_of(lines: list[str], size: int):
    for start in range(0, len(lines), size):
        yield start + 1, lines[start : start + size], False


def both(
    lines: list[str],
    pattern: str,
    *,
    literal: bool = False,
    ignore_case: bool = False,
    context: int = 2,
    batch: int = 50,
):
    compiled = compile_user_pattern(pattern, literal=literal, ignore_case=ignore_case)
    plain = grep_lines(lines, compiled, context=context, max_matches=1000)
    stats = PrefilterStats()
    filtered = grep_lines(
        prefiltered_lines(
            batches_of(lines, batch),
            batch_pattern(pattern, literal=literal, ignore_case=ignore_case),
            context=context,
            stats=stats,
        ),
        compiled,
        context=context,
        max_matches=1000,
    )
    return plain, filtered, stats


def test_skips_batches_without_a_hit_and_keeps_context():
    lines = [f"line {i} ok" for i in range(1000)]
    lines[512] = "ERROR boom"
    plain, filtered, stats = both(lines, "ERROR", context=3)
    assert filtered.render() == plain.render() and filtered.match_count == 1
    assert stats.lines == 1000 and stats.skipped_lines >= 900  # only the batch with the hit was grepped
    assert [ln.lineno for ln in filtered.hunks[0].lines] == [510, 511, 512, 513, 514, 515, 516]


@pytest.mark.parametrize("pattern", [r"^line 1\d$", r"ok$", r"\bERR", r"(?i)error", r"x{0}"])
def test_anchors_and_flags_match_the_per_line_result(pattern):
    rng = random.Random(3)
    lines = [rng.choice(["line 12", "ERROR x", "all ok", "noise", ""]) for _ in range(400)]
    plain, filtered, _ = both(lines, pattern)
    assert filtered.render() == plain.render()


def test_patterns_that_could_differ_on_joined_text_disable_the_prefilter():
    assert batch_pattern(r"\Aline") is None and batch_pattern(r"(?<=a)b") is None
    assert batch_pattern("plain text", literal=True) is not None


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(["alpha", "beta gamma", "ERROR: x", "  ", "delta42", "Beta"]), max_size=120),
    st.sampled_from(["beta", "^ERROR", r"\d+$", "a g", "BETA"]),
    st.booleans(),
    st.integers(1, 9),
    st.integers(0, 3),
)
def test_same_result_as_plain_grep(lines, pattern, ignore_case, batch, context):
    plain, filtered, _ = both(lines, pattern, ignore_case=ignore_case, batch=batch, context=context)
    assert filtered.render() == plain.render()
    assert filtered.match_count == plain.match_count
