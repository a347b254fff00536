"""sniff: kinds, huge-line flag, binary detection, never raises."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stowage.blobstore.presentation.sniff import KINDS, SniffResult, magic_label, sniff

PYTEST_LOG = """\
============================= test session starts ==============================
collected 12 items

tests/test_a.py ........F...                                             [100%]

=================================== FAILURES ===================================
E       assert 4 == 3
FAILED tests/test_a.py::test_sum - assert 4 == 3
========================= 1 failed, 11 passed in 0.12s =========================
"""

TRACEBACK = """\
Traceback (most recent call last):
  File "/app/main.py", line 10, in <module>
    main()
  File "/app/main.py", line 6, in main
    raise ValueError("bad input")
ValueError: bad input
"""

SERVER_LOG = "\n".join(f"2026-01-02T10:00:{i % 60:02d}Z INFO request {i} served in {i % 17}ms" for i in range(200))

PROSE = """\
The quick brown fox jumps over the lazy dog. This paragraph is ordinary prose
written by a person, with no timestamps, levels or stack frames in it.

A second paragraph follows, still calm and uneventful, describing a garden.
"""


@pytest.mark.parametrize(
    "payload,kind",
    [
        ('{"a": 1, "b": [1, 2, 3]}', "json"),
        ("[1, 2, 3]", "json"),
        ('  \n{"pretty": {\n  "nested": true\n}}\n', "json"),
        (json.dumps("line1\nline2\nline3"), "json"),
        ('{"a": 1}\n{"a": 2}\n{"a": 3}\n', "jsonl"),
        ("[1]\n[2]\n", "jsonl"),
        (PYTEST_LOG, "log"),
        (TRACEBACK, "log"),
        (SERVER_LOG, "log"),
        ("$ ls -la\ntotal 0\n", "log"),
        ("src/main.c:12:5: error: expected ';'\n", "log"),
        (PROSE, "text"),
        ('{"broken": ', "text"),
        ('"quoted" but not "json"', "text"),
        ("", "text"),
    ],
)
def test_kinds(payload, kind):
    assert sniff(payload).kind == kind
    assert sniff(payload.encode()).kind == kind


def test_binary_by_nul_and_by_invalid_utf8_and_magic():
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    r = sniff(png)
    assert r == SniffResult("binary", False, "PNG image")
    assert sniff(bytes(range(128, 256)) * 50).kind == "binary"
    assert sniff("text with a \x00 nul").kind == "binary"
    assert sniff("".join(chr(i) for i in range(1, 9)) * 100).kind == "binary"
    assert magic_label(b"%PDF-1.7 ...") == "PDF document"
    assert magic_label(b"plain") is None


def test_mostly_valid_utf8_with_one_bad_byte_is_text():
    data = ("hello wörld\n" * 500).encode() + b"\xff" + b"tail\n"
    assert sniff(data).kind == "text"


def test_utf8_split_at_sample_boundary_is_not_binary():
    data = ("é" * 100_000).encode()  # 2-byte chars; sample cut lands mid-character
    assert sniff(data, sample_chars=1025).kind == "text"


def test_huge_line_flag():
    minified = json.dumps({"k": [{"i": i, "v": "x" * 20} for i in range(2000)]}, separators=(",", ":"))
    r = sniff(minified)
    assert r.kind == "json" and r.huge_line
    b64 = base64.b64encode(bytes(range(256)) * 200).decode()
    assert sniff(b64) == SniffResult("text", True)
    assert sniff(b64 + "\n").huge_line
    assert not sniff("short line\n" * 10_000).huge_line
    assert not sniff("x" * 100).huge_line
    assert not sniff(("y" * 5000 + "\n") * 50).huge_line  # many long lines: pageable by line


def test_large_payload_uses_prefix_and_suffix_only():
    big = "[" + ",".join(str(i) for i in range(1_000_000)) + "]"
    assert sniff(big).kind == "json"  # bracket shape, not parsed
    log = PYTEST_LOG * 20_000
    assert sniff(log).kind == "log"


def test_kinds_constant():
    assert set(KINDS) == {"json", "jsonl", "log", "text", "binary"}


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=5000))
def test_never_raises_on_bytes(data):
    assert sniff(data).kind in KINDS


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=5000), st.integers(min_value=-5, max_value=5000))
def test_never_raises_on_text(text, sample):
    r = sniff(text, sample_chars=sample)
    assert r.kind in KINDS
    assert sniff(text, sample_chars=sample) == r  # deterministic
