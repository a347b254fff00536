"""What replaces a tool result in the history, decided in one place for the host's ``transform_tool_result``.

Two answers can replace a result.  A re-read the host answers with its read
dedup ("unchanged", or BLOCKED) while the request the model answered showed
the earlier output only as a stub gets that earlier output back
(``view.reread``); any other result the store session spills when it is over
its threshold (a preview and a handle).  Otherwise the result stays.  The
glue only hands the result in and says what happened.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable

from ..chat.messages import Message
from ..records.part_status import SpillRecord
from ..store_session.session import StoreSession
from ..view.reread import reread_answer

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToolResultReplacement:
    """``text`` replaces the result in the history (None keeps it); ``spilled`` says what went to the store (the
    chat note's figures), ``reread`` that the text is the earlier output of a re-read the request showed as a stub."""

    text: str | None = None
    spilled: SpillRecord | None = None
    reread: bool = False


def replacement_for(
    tool_name: str,
    args: Any,
    result: Any,
    *,
    last_request: tuple[list[Message], list[Message]] | None,
    store: StoreSession,
    count_tokens: Callable[[str], int],
) -> ToolResultReplacement:
    """The re-read's earlier output, else the spill's preview, else nothing (keep the result)."""
    if last_request is not None:  # (history, as sent) of the request the model answered
        earlier = reread_answer(tool_name, args, result, last_request[0], last_request[1])
        if earlier is not None:
            logger.info(
                "stowage: re-read of %s answered with its earlier output (the request showed a stub)",
                (args or {}).get("path") if isinstance(args, dict) else "a file",
            )
            return ToolResultReplacement(text=earlier, reread=True)
    outcome = store.spill(tool_name, args, result, count_tokens)
    return ToolResultReplacement(text=outcome.text, spilled=outcome.spilled)
