"""Streaming grep with context over stored text, bounded in matches, time and size.

Lines are consumed one at a time and only the last ``context`` lines plus the
hunks already found are kept, so a 100 MB blob streams through in bounded
memory.  Long lines are shown as a window around the match rather than their
head (the head of a minified line rarely contains the hit).  For one-line
payloads, :func:`grep_text_windows` reports char offsets instead of lines.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from .safe_regex import PatternTimeoutError, SafePattern

__all__ = [
    "GrepLine",
    "GrepHunk",
    "GrepResult",
    "grep_lines",
    "TextWindow",
    "WindowGrepResult",
    "grep_text_windows",
]

REASON_MATCH_CAP = "match_cap"
REASON_TIME_BUDGET = "time_budget"
REASON_PATTERN_TIMEOUT = "pattern_timeout"


@dataclass(frozen=True)
class GrepLine:
    """One shown line: ``text`` is ``line[col:col + len(text)]`` with the cut sizes
    on each side; ``match`` is the first match span in the full line, if any."""

    lineno: int
    text: str
    is_match: bool
    col: int = 0
    cut_before: int = 0
    cut_after: int = 0
    match: tuple[int, int] | None = None

    def render(self, width: int = 0) -> str:
        mark = ":" if self.is_match else "-"
        pre = f"…[{self.cut_before:,} chars] " if self.cut_before else ""
        post = f" …[{self.cut_after:,} chars]" if self.cut_after else ""
        return f"{self.lineno:>{width}}{mark} {pre}{self.text}{post}"


@dataclass(frozen=True)
class GrepHunk:
    """Consecutive lines around one or more matches (overlapping windows merged)."""

    lines: tuple[GrepLine, ...]

    @property
    def start(self) -> int:
        return self.lines[0].lineno

    @property
    def end(self) -> int:
        return self.lines[-1].lineno


@dataclass(frozen=True)
class GrepResult:
    """Hunks in file order; ``truncated`` with ``reason`` (``match_cap``,
    ``time_budget`` or ``pattern_timeout``) when the scan stopped early;
    ``note`` is a model-ready explanation when there is something to say."""

    hunks: tuple[GrepHunk, ...]
    match_count: int
    scanned_lines: int
    truncated: bool = False
    reason: str | None = None
    note: str = ""

    @property
    def matches(self) -> list[GrepLine]:
        return [ln for h in self.hunks for ln in h.lines if ln.is_match]

    def render(self) -> str:
        """grep -n style text: ``12: hit``, ``11- context``, ``--`` between hunks."""
        width = len(str(self.hunks[-1].end)) if self.hunks else 1
        blocks = ["\n".join(ln.render(width) for ln in h.lines) for h in self.hunks]
        out = "\n--\n".join(blocks)
        if self.note:
            out = f"{out}\n{self.note}" if out else self.note
        return out


def _clip_line(lineno: int, line: str, span: tuple[int, int] | None, max_chars: int, is_match: bool) -> GrepLine:
    """Cut a long line to *max_chars*, centred on the match when there is one."""
    n = len(line)
    if n <= max_chars:
        return GrepLine(lineno, line, is_match, 0, 0, 0, span)
    if span is None:
        start = 0
    else:
        mid = (span[0] + min(span[1], span[0] + max_chars)) // 2
        start = max(0, min(n - max_chars, mid - max_chars // 2))
    end = start + max_chars
    return GrepLine(lineno, line[start:end], is_match, start, start, n - end, span)


def _numbered(lines: Iterable[tuple[int, str]] | Iterable[str], start_line: int) -> Iterable[tuple[int, str]]:
    n = start_line
    for item in lines:
        if isinstance(item, tuple):
            n, text = item
        else:
            text = item
        if text.endswith("\n"):
            text = text[:-2] if text.endswith("\r\n") else text[:-1]
        yield n, text
        n += 1


def grep_lines(
    lines: Iterable[tuple[int, str]] | Iterable[str],
    pattern: SafePattern,
    *,
    context: int = 2,
    max_matches: int = 50,
    max_line_chars: int = 500,
    time_budget_s: float = 2.0,
    start_line: int = 1,
) -> GrepResult:
    """Search *lines* (numbered from *start_line*, or ``(lineno, text)`` pairs).

    Trailing newlines are stripped before matching.  Stops at *max_matches*
    (after collecting the last match's trailing context), when
    *time_budget_s* is spent, or when the pattern times out on a line; the
    partial result is returned with ``truncated`` and a ``reason``.
    """
    context = max(0, context)
    deadline = time.monotonic() + max(0.0, time_budget_s)
    before: deque[GrepLine] = deque(maxlen=context)
    hunks: list[GrepHunk] = []
    current: list[GrepLine] = []
    after_left = 0
    matches = 0
    scanned = 0
    reason: str | None = None
    note = ""
    for lineno, text in _numbered(lines, start_line):
        if matches >= max_matches and after_left == 0:
            reason = REASON_MATCH_CAP
            note = f"stopped after {max_matches:,} matches at line {lineno - 1:,}; narrow the pattern or grep from a later line"
            break
        if time.monotonic() > deadline:
            reason = REASON_TIME_BUDGET
            note = f"time budget of {time_budget_s:g}s spent after {scanned:,} lines; continue from line {lineno:,}"
            break
        scanned += 1
        m = None
        if matches < max_matches:
            try:
                m = pattern.search(text, deadline=deadline)
            except PatternTimeoutError as exc:
                scanned -= 1
                reason = REASON_TIME_BUDGET if exc.budget_exhausted else REASON_PATTERN_TIMEOUT
                note = f"{exc} (scan stopped at line {lineno:,})"
                break
        if m is not None:
            matches += 1
            shown = _clip_line(lineno, text, m.span(), max_line_chars, True)
            if current and lineno - current[-1].lineno - 1 > len(before):
                hunks.append(GrepHunk(tuple(current)))
                current = []
            if current:
                current.extend(before)
            else:
                current.extend(b for b in before if b.lineno >= lineno - context)
            before.clear()
            current.append(shown)
            after_left = context
        elif after_left > 0:
            current.append(_clip_line(lineno, text, None, max_line_chars, False))
            after_left -= 1
        else:
            if current and lineno - current[-1].lineno > context:
                hunks.append(GrepHunk(tuple(current)))
                current = []
            if context:
                before.append(_clip_line(lineno, text, None, max_line_chars, False))
    if current:
        hunks.append(GrepHunk(tuple(current)))
    return GrepResult(tuple(hunks), matches, scanned, reason is not None, reason, note)


@dataclass(frozen=True)
class TextWindow:
    """``text[start:end]`` around one or more matches (absolute char offsets)."""

    start: int
    end: int
    text: str
    matches: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class WindowGrepResult:
    """Char-offset windows in text order, with the same truncation fields as :class:`GrepResult`."""

    windows: tuple[TextWindow, ...]
    match_count: int
    total_chars: int
    truncated: bool = False
    reason: str | None = None
    note: str = ""

    def render(self) -> str:
        parts = [f"[chars {w.start:,}–{w.end:,}] {w.text}" for w in self.windows]
        if self.note:
            parts.append(self.note)
        return "\n".join(parts)


def grep_text_windows(
    text: str,
    pattern: SafePattern,
    *,
    window: int = 200,
    max_matches: int = 50,
    time_budget_s: float = 2.0,
) -> WindowGrepResult:
    """Matches in one long text, each shown with *window* chars of context per side.

    Overlapping windows merge; a match longer than *window* is shown only in
    part (its full span is in ``matches``).  For single huge lines (minified JSON, base64,
    one-line logs) where line numbers say nothing.
    """
    window = max(0, window)
    deadline = time.monotonic() + max(0.0, time_budget_s)
    spans: list[tuple[int, int]] = []
    reason: str | None = None
    note = ""
    try:
        for m in pattern.finditer(text, deadline=deadline):
            if len(spans) >= max_matches:
                reason = REASON_MATCH_CAP
                note = f"stopped after {max_matches:,} matches at char {spans[-1][1]:,}"
                break
            spans.append(m.span())
    except PatternTimeoutError as exc:
        reason = REASON_TIME_BUDGET if exc.budget_exhausted else REASON_PATTERN_TIMEOUT
        last = spans[-1][1] if spans else 0
        note = f"{exc} (scan stopped after char {last:,})"
    windows: list[TextWindow] = []
    for s, e in spans:
        # A match can be huge (".*" on a 10 MB line): show at most *window* of it.
        ws, we = max(0, s - window), min(len(text), min(e, s + max(window, 1)) + window)
        if windows and ws <= windows[-1].end:
            prev = windows[-1]
            we = max(we, prev.end)
            windows[-1] = TextWindow(prev.start, we, text[prev.start : we], prev.matches + ((s, e),))
        else:
            windows.append(TextWindow(ws, we, text[ws:we], ((s, e),)))
    return WindowGrepResult(tuple(windows), len(spans), len(text), reason is not None, reason, note)
