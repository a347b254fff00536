"""One line in the chat when Stowage stores a tool output away, where the host lets a plugin say it.

Hermes 0.19.0 gives a plugin no channel to the user: hooks get no agent (its
``_emit_status`` and ``status_callback`` stay private) and ``inject_message``
starts a model turn.  What the interactive CLI does offer is the printer it
uses itself for lines from other threads (``cli._cprint``: prompt_toolkit's
renderer, which keeps the input line intact).  So the note goes there while
``hermes chat`` runs its interactive prompt, and nowhere else: ``hermes chat
-q`` keeps its stdout for the answer, and the gateway (Telegram, Discord, ...)
has no such printer, so ``/stowage`` remains the way to see spills there.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Callable

logger = logging.getLogger(__name__)


NOTE_COLUMNS = 100  # one line in a 100-column terminal, whatever the tool's name


def spill_note(tool_name: str, chars: int, tokens: int, handle: str) -> str:
    """``┊ stowage: stored read_file's 25,706 tokens as 1192a7ff25469b0d; model got a preview``.

    One line of at most :data:`NOTE_COLUMNS` characters: a long tool name is shortened, never the handle.
    """
    tool = tool_name or "a tool"
    tail = f"'s {tokens:,} tokens as {handle}; model got a preview"
    head = "  ┊ stowage: stored "
    room = NOTE_COLUMNS - len(head) - len(tail)
    if len(tool) > room:
        tool = tool[: max(1, room - 1)] + "…"
    return head + tool + tail


def chat_printer() -> Callable[[str], Any] | None:
    """The interactive CLI's own line printer, when this process runs it with its prompt up; else None."""
    cli = sys.modules.get("cli")
    printer = getattr(cli, "_cprint", None)
    if not callable(printer):
        return None
    try:
        from prompt_toolkit.application import get_app_or_none
    except ImportError:
        return None
    app = get_app_or_none()
    return printer if app is not None and getattr(app, "_is_running", False) else None


def say(line: str) -> bool:
    """Show ``line`` in the chat if the host lets a plugin; True when shown.  Never raises."""
    try:
        printer = chat_printer()
        if printer is None:
            return False
        printer(line)
        return True
    except Exception:  # a note must never cost the session anything
        logger.debug("stowage: could not print the chat note", exc_info=True)
        return False
