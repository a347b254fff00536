"""bound_text: hard bound, honest marker, kept parts are exact prefix/suffix."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from stowage.blobstore.presentation.bounded import Bounded, bound_text


def test_short_text_is_returned_unchanged():
    b = bound_text("hello\nworld", 100)
    assert b == Bounded("hello\nworld", 0, "", 11)


def test_end_cut_keeps_head_and_says_how_to_continue():
    text = "".join(f"line {i:05d}\n" for i in range(5000))  # 55,000 chars
    b = bound_text(text, 500)
    assert len(b.text) <= 500
    assert b.cut_chars == len(text) - b.cut_start
    assert text.startswith(b.text[: b.cut_start])
    assert f"{b.cut_chars:,} chars cut" in b.text
    assert f"use range with start={b.cut_start}" in b.text
    assert b.note in b.text
    # cut snapped to a line boundary
    assert b.text[: b.cut_start].endswith("\n")


def test_middle_cut_keeps_both_ends():
    text = "".join(f"row {i}\n" for i in range(10000))
    b = bound_text(text, 400, where="middle")
    assert len(b.text) <= 400
    head = text[: b.cut_start]
    tail = text[b.cut_start + b.cut_chars :]
    assert b.text.startswith(head)
    assert b.text.endswith(tail)
    assert "row 0\n" in b.text and "row 9999\n" in b.text
    assert len(head) + len(tail) + b.cut_chars == len(text)


def test_base_offset_and_custom_hint():
    b = bound_text("x" * 1000, 200, base_offset=5000, more_hint="fetch start={start} end={end}")
    assert f"fetch start={b.cut_start} end=6000" in b.text
    assert b.cut_start > 5000
    assert "offsets 5,1" in b.text or f"offsets {b.cut_start:,}" in b.text


def test_hint_can_be_disabled_and_broken_template_is_kept_verbatim():
    assert "range" not in bound_text("y" * 1000, 200, more_hint=None).text
    assert "{oops}" in bound_text("y" * 1000, 200, more_hint="see {oops}").text


def test_bound_too_small_for_marker_truncates_plainly():
    b = bound_text("abcdefghij" * 10, 5)
    assert b.text == "abcde"
    assert b.cut_chars == 95
    assert "95 chars cut" in b.note


def test_zero_bound():
    b = bound_text("abc", 0)
    assert b.text == "" and b.cut_chars == 3


def test_bad_where_is_rejected():
    import pytest

    with pytest.raises(ValueError):
        bound_text("x" * 100, 50, where="start")


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.characters(blacklist_categories=("Cs",)) | st.just("\n"), max_size=3000),
    max_chars=st.integers(min_value=0, max_value=2500),
    where=st.sampled_from(["end", "middle"]),
    base=st.integers(min_value=0, max_value=10**9),
)
def test_invariants(text, max_chars, where, base):
    b = bound_text(text, max_chars, where=where, base_offset=base)
    assert len(b.text) <= max_chars
    if len(text) <= max_chars:
        assert b.text == text and b.cut_chars == 0 and b.note == ""
        return
    assert b.cut_chars > 0
    start = b.cut_start - base
    assert 0 <= start <= len(text)
    head, tail = text[:start], text[start + b.cut_chars :]
    assert b.text.startswith(head)
    assert b.text.endswith(tail)
    assert len(head) + b.cut_chars + len(tail) == len(text)
    if where == "end":
        assert tail == ""
    assert f"{b.cut_chars:,} chars cut" in b.note
