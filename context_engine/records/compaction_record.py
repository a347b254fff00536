"""What one ``compress()`` call did: the typed record kept in the engine's log.

The same record feeds the status (``stowage status``, ``/stowage``, the
dashboard, the status files), the log line and the summary log, so the
three read one shape.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..compaction.inputs import CompactionOutcome, CompactionStats
from .plain_data import to_plain

LOG_LIMIT = 50  # records an engine keeps (oldest dropped)

# the record's figures that go into the summary log next to the summary text
SUMMARY_LOG_FIELDS = (
    "at",
    "result",
    "forced",
    "focus_topic",
    "summary_error",
    "tokens_before",
    "tokens_after",
    "messages_before",
    "messages_after",
    "window_messages",
    "window_tool_outputs",
    "pruned_outputs",
    "window_reference",
)


@dataclass
class CompactionRecord(CompactionStats):
    """The compactor's figures (:class:`CompactionStats`, every field) and what the engine knows around them.

    ``result`` is ``compacted``, ``fallback`` (the model-free summary), ``no-op`` or ``aborted``; how it was
    served is ``summary_source`` and ``wait_s``, one way for status, dashboard and ``stowage summary``.
    """

    result: str = ""
    at: float = 0.0
    focus_topic: str | None = None
    forced: bool = False
    summary_error: str | None = None
    window_reference: str | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    # how it was served: summary_source (CompactionStats: model, prepared ahead, fallback, or none) and
    # how long compress() blocked the turn, waiting for a prepared summary included (seconds)
    wait_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # keys of a newer writer, kept when read back

    @classmethod
    def of(
        cls,
        outcome: CompactionOutcome,
        result: str,
        *,
        current_tokens: int | None,
        focus_topic: str | None,
        forced: bool,
        tokens_after: int | None,
    ) -> "CompactionRecord":
        stats = outcome.stats
        return cls(
            messages_before=stats.messages_before,
            messages_after=stats.messages_after,
            pruned_outputs=stats.pruned_outputs,
            images_removed=stats.images_removed,
            arguments_shrunk=stats.arguments_shrunk,
            window_messages=stats.window_messages,
            window_tool_outputs=stats.window_tool_outputs,
            summary_chars=stats.summary_chars,
            summary_source=stats.summary_source,
            summary_calls=stats.summary_calls,
            phase_ms=dict(stats.phase_ms),
            result=result,
            at=round(time.time(), 3),
            focus_topic=focus_topic,
            forced=forced,
            summary_error=outcome.summary_error,
            window_reference=outcome.window_reference,
            tokens_before=current_tokens or None,
            tokens_after=tokens_after,
        )

    def as_dict(self) -> dict[str, Any]:
        return to_plain(self)

    def summary_fields(self) -> dict[str, Any]:
        """The figures the summary log keeps with each summary."""
        return {name: getattr(self, name) for name in SUMMARY_LOG_FIELDS}
