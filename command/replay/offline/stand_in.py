"""The summary model of a replay: a fixed, deterministic text; every prompt it receives is measured.

Named in every report: replay figures are about context size, cost and
events, not about summary quality.
"""

from __future__ import annotations

from typing import Any, Callable

from .clock import Latency, SimClock


class StandInSummarizer:
    """Answers every summary request with the same fixed text; records each prompt's size.

    Named in every report: the figures are about context size, cost and
    events, not about summary quality.
    """

    NAME = "stand-in summarizer (fixed deterministic text, no model called)"

    def __init__(self, count_text: Callable[[str], int], chars: int = 6000) -> None:
        self.count_text = count_text
        self.text = stand_in_summary(chars)
        self.prompt_tokens: list[int] = []
        # a timed replay (clock.py): each call takes latency(prompt tokens) simulated seconds
        self.clock: SimClock | None = None
        self.latency: Latency | None = None

    def __call__(self, prompt: str, *_: Any, **__: Any) -> str:
        tokens = self.count_text(prompt if isinstance(prompt, str) else str(prompt))
        self.prompt_tokens.append(tokens)
        if self.clock is not None and self.latency is not None:
            self.clock.advance(self.latency(tokens))
        return self.text

    def take(self) -> list[int]:
        taken, self.prompt_tokens = self.prompt_tokens, []
        return taken


def stand_in_summary(chars: int = 6000) -> str:
    """A summary-shaped text of about ``chars`` characters, the same every time."""
    head = (
        "## Goal\nContinue the coding task described by the user (stand-in summary: no model wrote this).\n\n"
        "## Constraints & Preferences\n- none recorded by the stand-in\n\n"
        "## Progress\n### Done\n"
    )
    tail = (
        "\n## Key Decisions\n- stand-in\n\n## Relevant Files\n- stand-in\n\n"
        "## Next Steps\n- continue from the newest user request\n\n## Critical Context\n- stand-in\n"
    )
    lines = []
    size = len(head) + len(tail)
    number = 0
    while size < chars:
        line = f"- step {number}: the stand-in records that earlier work happened here; details are in the history.\n"
        lines.append(line)
        size += len(line)
        number += 1
    return head + "".join(lines) + tail
