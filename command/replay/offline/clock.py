"""Simulated time for a replay: how long each compaction blocks the turn, without waiting for it.

A replay answers every model call at once, so wall time says nothing about
what a user would wait.  A :class:`SimClock` keeps simulated seconds
instead: the driver advances it by the main model's latency after each
request, a summary call made on the turn's thread (a compaction calling the
model) advances it by the summary model's latency, and a call made on
another thread (a summary prepared ahead) only moves that thread's own
time, so its reply is ready at start + latency while the turn goes on.  An
engine that waits for such a reply calls :meth:`SimClock.advance_to`.

The driver lets a background call finish (in real time) before it moves
the clock on, so every reading is deterministic.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass


class SimClock:
    """Simulated monotonic seconds: the owner thread's time, and per-thread time for background calls."""

    def __init__(self) -> None:
        self._now = 0.0
        self._owner = threading.get_ident()
        self._local = threading.local()

    def __call__(self) -> float:
        pinned = getattr(self._local, "now", None)
        return float(pinned) if pinned is not None else self._now

    def on_owner(self) -> bool:
        return threading.get_ident() == self._owner

    def advance(self, seconds: float) -> None:
        """``seconds`` pass for the calling thread (the turn's, or a background call's own)."""
        seconds = max(0.0, float(seconds))
        if self.on_owner():
            self._now += seconds
        else:
            self._local.now = self() + seconds

    def advance_to(self, moment: float) -> None:
        """The turn's thread waited until ``moment`` (a reply prepared on another thread); never backwards."""
        if self.on_owner():
            self._now = max(self._now, float(moment))


@dataclass(frozen=True)
class Latency:
    """A model's time per call: ``base_s`` plus ``per_1k_s`` per 1,000 input tokens."""

    base_s: float
    per_1k_s: float = 0.0

    def __call__(self, input_tokens: int) -> float:
        return self.base_s + self.per_1k_s * max(0, input_tokens) / 1000

    def describe(self) -> str:
        if not self.per_1k_s:
            return f"{self.base_s:g} s a call"
        return f"{self.base_s:g} s + {self.per_1k_s * 1000:g} ms per 1k input tokens"


_SPEC = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:\+\s*(\d+(?:\.\d+)?)\s*/\s*1k\s*)?$")


def parse_latency(text: str) -> Latency:
    """``"10"`` (seconds a call) or ``"2+0.025/1k"`` (2 s plus 0.025 s per 1k input tokens)."""
    match = _SPEC.match(str(text))
    if match is None:
        raise ValueError(f"expected SECONDS or SECONDS+SECONDS/1k (e.g. 10 or 2+0.025/1k), got {text!r}")
    return Latency(float(match.group(1)), float(match.group(2) or 0.0))


@dataclass(frozen=True)
class Timing:
    """The models' latencies a replay simulates."""

    summary: Latency
    main_s: float = 2.0

    def describe(self) -> str:
        return f"summary model {self.summary.describe()}, main model {self.main_s:g} s a call"
