"""Grep inside one long text by char offsets.

For single huge lines (minified JSON, base64, one-line logs) a line number
says nothing; what the model needs is where the match is (char offsets it can
pass to a range read) and a little text around it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from .safe_regex import PatternTimeoutError, SafePattern

__all__ = ["TextWindow", "WindowGrepResult", "grep_text_windows"]

REASON_MATCH_CAP = "match_cap"
REASON_TIME_BUDGET = "time_budget"
REASON_PATTERN_TIMEOUT = "pattern_timeout"


@dataclass(frozen=True)
class TextWindow:
    """``text[start:end]`` around one or more matches (absolute char offsets)."""

    start: int
    end: int
    text: str
    matches: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class WindowGrepResult:
    """Char-offset windows in text order; ``truncated``/``reason``/``note`` as for line grep."""

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
    text: str, pattern: SafePattern, *, window: int = 200, max_matches: int = 50, time_budget_s: float = 2.0
) -> WindowGrepResult:
    """Matches in one long text, each shown with *window* chars of context per side.

    Overlapping windows merge; a match longer than *window* is shown only in
    part (its full span is in ``matches``).
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
