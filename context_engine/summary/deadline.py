"""One deadline per compaction for its summary: the wait for a prepared reply and the model call share it.

Without it a hung summary model cost a compaction twice the bound: first
the wait for the summary prepared ahead, then a second call with a fresh
timeout.  A :class:`SummaryDeadline` starts when the compaction starts;
whatever the wait used is gone for the call, and once it is spent the
compaction writes the fallback summary instead of calling again.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

# Hermes's own floor for the compression call's timeout (auxiliary.compression.timeout): the budget of a
# compaction when stowage.compaction.summary_timeout_seconds is 0.
HOST_SUMMARY_TIMEOUT_SECONDS = 300.0
MIN_CALL_SECONDS = 0.01


class SummaryDeadline:
    """The time one compaction may spend on its summary, from its start."""

    def __init__(self, seconds: float | None, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.configured = seconds or None  # None: the host's own timeout for a call made at once
        self.budget = float(seconds or HOST_SUMMARY_TIMEOUT_SECONDS)
        self._clock = clock
        self._started = clock()
        self.waited = False  # for a summary still being prepared

    def remaining(self) -> float:
        return max(0.0, self.budget - (self._clock() - self._started))

    def spent(self) -> bool:
        return self.remaining() <= 0.0

    def wait(self, done: threading.Event) -> bool:
        """Wait for ``done`` within what is left; True when it was set."""
        if done.is_set():
            return True
        self.waited = True
        return done.wait(self.remaining())

    def call_timeout(self) -> float | None:
        """The timeout to pass on to the model call.

        What is left of the budget; None (the host's own deadline) when no
        time was configured and nothing was spent waiting for a prepared
        summary, so an unconfigured call is exactly what it was before.
        """
        if self.configured is None and not self.waited:
            return None
        return max(self.remaining(), MIN_CALL_SECONDS)  # never 0, which a client reads as "no timeout"

    def describe(self) -> str:
        return f"{self.budget:g} s"
