"""Sample records of what the engine writes about a compaction, for tests of the readers (CLI, slash command,
dashboard) that need one without running a compaction."""

from __future__ import annotations

from typing import Any


def compaction_record(**fields: Any) -> dict[str, Any]:
    """A summary-log record of one successful compaction (100k -> 6k tokens); ``fields`` add or override keys."""
    return {
        "compaction": 1,
        "at": 1_700_000_000.0,
        "result": "compacted",
        "tokens_before": 100_000,
        "tokens_after": 6_000,
        "messages_before": 30,
        "messages_after": 9,
        "window_messages": 22,
        "window_tool_outputs": 5,
        "pruned_outputs": 2,
        "fallback_used": False,
        "model": "gpt-x",
        **fields,
    }
