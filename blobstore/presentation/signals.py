"""Line signals: which lines of command output deserve a place in a preview.

A head-only preview loses the part of a log that matters (the failure is
usually in the middle or at the end), so previews look for lines that read
like errors or warnings, and sniffing uses the same vocabulary to tell logs
from prose.

Speed matters because this runs on every spilled output: a case-insensitive
alternation with word boundaries runs at about 1 MB/s in ``re``.  Instead,
each 1 MiB chunk is lower-cased once, keywords are located with ``str.find``
(C speed), and only at those hits is a precise, anchored pattern applied.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator

__all__ = ["LOGISH_RE", "iter_hits", "signal_level", "scan_signal_lines"]

ERROR, WARNING = 2, 1

# Keyword starts, lower-case.  Words that may end a CamelCase identifier
# (ValueError, IOException, UserWarning) need no boundary before them; the
# price is a rare false positive such as "terror".
_NO_LEFT_BOUNDARY = ("error", "exception", "warning", '"exit_code"')
_KEYWORDS = _NO_LEFT_BOUNDARY + (
    "err!", "traceback", "fail", "fatal", "panic", "assert", "segmentation fault",
    "core dumped", "permission denied", "undefined reference", "unhandled", "not found",
    "no such file", "killed", "out of memory", "abort", "exit", "returned non-zero",
    "non-zero exit", "warn", "deprecat",
)  # fmt: skip
_ERROR_AT = re.compile(
    r"(?:error|exception)s?\b|err!|traceback\b|fail(?:ed|ure|ures|s)?\b|fatal\b|panic(?:ked)?\b"
    r"|assert(?:ion)?\b|segmentation fault\b|core dumped\b|permission denied\b"
    r"|undefined reference\b|unhandled\b|not found\b|no such file\b|killed\b|out of memory\b"
    r"|abort(?:ed)?\b|exit(?:ed)?(?: with)? (?:code|status)[ :=]*[1-9]|returned non-zero\b"
    r"|non-zero exit\b|\"exit_code\": *[1-9]"
)
_WARNING_AT = re.compile(r"warn(?:ing|ings|s)?\b|deprecat")
_PYTEST_E = "E   "  # pytest failure detail lines (case-sensitive, at line start)
_CHUNK = 1 << 20
_OVERLAP = 64  # longest keyword plus what the anchored pattern reads after it

# Lines that look machine-produced: timestamps, levels, stack frames, prompts,
# compiler diagnostics, test-runner banners, ANSI colour codes.  Used on a few
# hundred short sample lines only.
LOGISH_RE = re.compile(
    r"^\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d"
    r"|^\[?\d\d:\d\d:\d\d"
    r"|\b(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL)\b"
    r"|^\s+at [\w.$<>]+\("
    r"|^  File \".*\", line \d+"
    r"|^Traceback \(most recent call last\)"
    r"|^[$#>] \S"
    r"|^[\w./\\-]+:\d+(?::\d+)?: "
    r"|^={3,} .* ={3,}$|^-{3,} .* -{3,}$"
    r"|^(?:PASS|FAIL|FAILED|ok|OK|ERROR|SKIP)\b"
    r"|\x1b\[[0-9;]*m"
    r"|^npm (?:ERR|WARN)|^warning: |^error(?:\[\w+\])?: "
    r"|^\s*\d+(?:\.\d+)?%\s*\|"
)

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _lower(s: str) -> str:
    low = s.lower()
    # A few characters (e.g. U+0130) lower-case to two; keep offsets aligned.
    return low if len(low) == len(s) else s.translate(_ASCII_LOWER)


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def iter_hits(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int]]:
    """``(offset, level)`` of signal words in ``text[start:end]``, ascending.

    ``level`` is 2 for error vocabulary, 1 for warnings.  Lazy per 1 MiB
    chunk, so a caller that stops early pays only for what it read.
    """
    end = len(text) if end is None else min(end, len(text))
    for a in range(max(0, start), end, _CHUNK):
        b = min(end, a + _CHUNK)
        raw = text[a : min(len(text), b + _OVERLAP)]
        low = _lower(raw)
        found: dict[int, int] = {}
        for kw in _KEYWORDS:
            i = low.find(kw, 0, b - a + len(kw) - 1)
            while 0 <= i < b - a:
                if kw in _NO_LEFT_BOUNDARY or not _is_word(low[i - 1] if i else (text[a - 1] if a else " ")):
                    if _ERROR_AT.match(low, i):
                        found[i] = ERROR
                    elif _WARNING_AT.match(low, i) and i not in found:
                        found[i] = WARNING
                i = low.find(kw, i + 1, b - a + len(kw) - 1)
        i = raw.find("\n" + _PYTEST_E, 0, b - a)
        while i >= 0:
            found[i + 1] = ERROR
            i = raw.find("\n" + _PYTEST_E, i + 1, b - a)
        if a == 0 and raw.startswith(_PYTEST_E):
            found[0] = ERROR
        for i in sorted(found):
            yield a + i, found[i]


def signal_level(line: str) -> int:
    """2 for an error-looking line, 1 for a warning-only line, 0 otherwise."""
    return max((lvl for _, lvl in iter_hits(line)), default=0)


class _LineNumbers:
    """1-based line number of an offset, counting newlines from the last query."""

    def __init__(self, text: str):
        self.text, self.pos, self.line = text, 0, 1

    def at(self, pos: int) -> int:
        if pos >= self.pos:
            self.line += self.text.count("\n", self.pos, pos)
        else:
            self.line -= self.text.count("\n", pos, self.pos)
        self.pos = pos
        return self.line


Record = tuple[int, int, int, int]  # (lineno, line start, line end, hit column)


def _lines_of(text: str, hits: Iterator[tuple[int, int]], numbers: _LineNumbers) -> Iterator[tuple[int, Record]]:
    """Group hits by line: ``(level, record)``; an error hit outranks a warning."""
    n = len(text)
    cur: list | None = None
    for pos, lvl in hits:
        if cur is not None and pos < cur[2]:
            if lvl > cur[4]:
                cur[3], cur[4] = pos - cur[1], lvl
            continue
        if cur is not None:
            yield cur[4], (cur[0], cur[1], cur[2], cur[3])
        ls = text.rfind("\n", 0, pos) + 1
        le = text.find("\n", pos)
        cur = [numbers.at(ls), ls, n if le < 0 else le, pos - ls, lvl]
    if cur is not None:
        yield cur[4], (cur[0], cur[1], cur[2], cur[3])


def scan_signal_lines(text: str, k: int, scan_chars: int) -> tuple[list[Record], list[Record]]:
    """Up to *k* error lines and *k* warning lines, in priority order
    (first, last, second, second-to-last, …).

    Reads forwards until *k* errors are found, then backwards from the end
    for the last *k*; the middle is read only when errors are sparse.  At most
    about ``scan_chars`` characters are read in total.
    """
    if k <= 0 or not text:
        return [], []
    n, half = len(text), max(_CHUNK, scan_chars // 2)
    numbers = _LineNumbers(text)
    first: dict[int, list[Record]] = {ERROR: [], WARNING: []}
    last: dict[int, deque[Record]] = {ERROR: deque(maxlen=k), WARNING: deque(maxlen=k)}
    frontier = 0
    for a in range(0, min(n, half), _CHUNK):
        frontier = min(n, a + _CHUNK)
        for lvl, rec in _lines_of(text, iter_hits(text, a, frontier), numbers):
            (first[lvl] if len(first[lvl]) < k else last[lvl]).append(rec)
        if len(first[ERROR]) >= k:
            break
    seen = {r[0] for lv in (ERROR, WARNING) for r in first[lv] + list(last[lv])}
    back: list[list[tuple[int, Record]]] = []
    errors_back = 0
    b = n
    while b > frontier and b > n - half and errors_back < k:
        a = max(frontier, b - _CHUNK)
        recs = [(lvl, r) for lvl, r in _lines_of(text, iter_hits(text, a, b), numbers) if r[0] not in seen]
        back.append(recs)
        errors_back += sum(1 for lvl, _ in recs if lvl == ERROR)
        b = a
    for recs in reversed(back):  # ascending order; the deques keep the latest k
        for lvl, r in recs:
            last[lvl].append(r)
    return _alternate(first[ERROR], list(last[ERROR]), k), _alternate(first[WARNING], list(last[WARNING]), k)


def _alternate(head: list, tail: list, k: int) -> list:
    """Up to *k* records taken first, last, second, second-to-last, …"""
    merged = {r[0]: r for r in head + tail}
    recs = [merged[i] for i in sorted(merged)]
    out: list = []
    while recs and len(out) < k:
        out.append(recs.pop(0))
        if recs and len(out) < k:
            out.append(recs.pop())
    return out
