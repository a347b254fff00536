"""The lean view's condensed reasoning: the head of an older assistant message and where the rest is.

Output stubs and cut arguments are written by ``context_engine/chat/stubs.py``
(one family, shared with compaction).  Same input, same text: the prompt
cache depends on it.
"""

from __future__ import annotations

from ..chat.markers import REASONING_MARK
from ..chat.stubs import fetch_hint

REASONING_HEAD_CHARS = 200


def condensed_reasoning(content: str, handle: str) -> str:
    """The head of an older assistant message that led to tool calls; the rest is in the store.

    The head usually states the intent; the calls and their outcomes stay in
    the request, so what was done stays visible.
    """
    head = content[:REASONING_HEAD_CHARS]
    cut = head.rfind(" ")
    if cut > REASONING_HEAD_CHARS // 2:
        head = head[:cut]
    return f"{head.rstrip()}… {REASONING_MARK}: {len(content) - len(head):,} chars; {fetch_hint(handle)}]"
