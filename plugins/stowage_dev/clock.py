"""A clock the tests move by hand (stores and retention read time through it)."""

from __future__ import annotations


class ManualClock:
    def __init__(self, t: float = 1_700_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds
