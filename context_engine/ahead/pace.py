"""When, inside a turn, to start writing the next summary: from measured growth, request time and model latency.

Long agent turns cross the compaction trigger in the middle of a turn, so
the summary must start on the request path.  Started too late, the
compaction waits for it; started too early, the history grows past the
prepared window's slack (the longer verbatim tail a compaction keeps when it
uses a prepared window) and the call is wasted.  :class:`Pace` remembers the
last requests (when, how big) and the summary model's observed latency;
:func:`due` turns them into the decision: start once the requests left
before the trigger take no longer than the summary does (plus a margin),
never before the slack allows.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from statistics import median

SAMPLES = 8  # recent requests the growth and the request time are measured on
MARGIN_REQUESTS = 4  # requests of lead beyond the latency: growth varies from one request to the next
JUMP_FACTOR = 2  # the trigger counts as one request away within this many times the largest recent step
LATENCY_WEIGHT = 0.5  # of a new latency observation in the running estimate


@dataclass
class Pace:
    """Recent requests since the last compaction, and the summary model's observed latency.

    Each request is (time, tokens as sent, tokens of the whole history): the
    trigger is on the request as sent (the view hides old outputs, so it
    grows slowly), while a prepared window's slack is spent by the whole
    history, which the compaction's verbatim tail measures.
    """

    requests: deque[tuple[float, int, int]] = field(default_factory=lambda: deque(maxlen=SAMPLES))
    latency_s: float | None = None  # None: no summary call observed yet

    def observe_request(self, at: float, sent_tokens: int, history_tokens: int) -> None:
        """One request about to go out; a smaller history than the last starts over (a compaction shrank it)."""
        if sent_tokens <= 0:
            return
        if self.requests and history_tokens < self.requests[-1][2]:
            self.requests.clear()
        self.requests.append((at, sent_tokens, history_tokens))

    def observe_latency(self, seconds: float) -> None:
        if seconds < 0:
            return
        previous = self.latency_s
        self.latency_s = seconds if previous is None else previous + LATENCY_WEIGHT * (seconds - previous)

    def _median_step(self, part: int) -> float | None:
        if len(self.requests) < 2:
            return None
        points = list(self.requests)
        return float(median(b[part] - a[part] for a, b in zip(points, points[1:], strict=False)))

    def seconds_per_request(self) -> float | None:
        return self._median_step(0)

    def sent_growth(self) -> float | None:
        """Mean growth of the request as sent per request over the samples (the view's steps make single
        steps noisy, some negative)."""
        if len(self.requests) < 2:
            return None
        return (self.requests[-1][1] - self.requests[0][1]) / (len(self.requests) - 1)

    def largest_step(self) -> int:
        """The largest growth as sent from one request to the next (a big tool output crosses the trigger)."""
        points = list(self.requests)
        return max((b[1] - a[1] for a, b in zip(points, points[1:], strict=False)), default=0)

    def history_growth(self) -> float | None:
        """Median growth of the whole history between consecutive requests (tokens)."""
        return self._median_step(2)


def due(sent_tokens: int, threshold: int, slack: int, pace: Pace) -> bool:
    """Start the summary now, at a request of ``sent_tokens`` towards a trigger at ``threshold``?

    Yes once the trigger may come within the time the summary takes: the
    requests left at the measured growth as sent are no more than its
    latency over the measured time per request, plus :data:`MARGIN_REQUESTS`
    (an unknown latency: as early as the slack allows), or a request up to
    :data:`JUMP_FACTOR` times as large as the largest recent one would cross
    it (both chosen on half A of the bench: fewer compactions then wait).  Never while the history
    would outgrow ``slack`` before then (the compaction could not use the
    window); with fewer than two requests measured, nothing starts.
    """
    if threshold <= 0 or sent_tokens <= 0:
        return False
    interval, sent_growth, history_growth = pace.seconds_per_request(), pace.sent_growth(), pace.history_growth()
    if interval is None or sent_growth is None or history_growth is None:
        return False
    gap = max(0, threshold - sent_tokens)
    if gap > slack:
        return False  # below the band where summaries are prepared (prepare_at of the trigger)
    fits = slack / history_growth - 1 if history_growth > 0 else math.inf
    latency = pace.latency_s
    lead = math.inf if latency is None or interval <= 0 else math.ceil(latency / interval) + MARGIN_REQUESTS
    left = gap / sent_growth if sent_growth > 0 else math.inf
    if gap <= JUMP_FACTOR * pace.largest_step():
        left = min(left, 1.0)
    return left <= min(lead, fits)
