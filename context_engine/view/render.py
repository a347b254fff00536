"""The words of the lean view: stub texts for old outputs and cut arguments.

A view stub must be short (it is sent with every later request) and still
tell the model what it no longer sees: the tool, the gist of its arguments,
the size, the verdict, and how to read it back.  Same input, same text: the
prompt cache depends on it.
"""

from __future__ import annotations

import json
from typing import Any

from ..markers import REASONING_MARK, VIEW_STUB_PREFIX
from ..prune import shrink_json_arguments
from ..stubs import outcome_of

ARGUMENTS_KEY = "_stowage_arguments"
REASONING_HEAD_CHARS = 200


def output_stub(tool_name: str, content: str, handle: str | None, kept: str = "") -> str:
    """One line for a tool output the request leaves out, then the lines ``kept`` of it (if any).

    The call it answers stands just above it in the same request, so the
    stub names only the tool.  ``handle`` is where its bytes are stored;
    None for Stowage's own read-back tools, whose output the call reproduces.
    ``kept`` is a digest of the lines agents quote (``stub_digest.py``).
    """
    head = f"{VIEW_STUB_PREFIX} {tool_name or 'tool'} -> {outcome_of(content)}; {len(content):,} chars"
    if handle is None:
        line = f"{head}; repeat the call to read it again"
    else:
        line = f'{head}; stowage_fetch(handle="{handle}")'
    return f"{line}\n{kept}" if kept else line


def condensed_reasoning(content: str, handle: str) -> str:
    """The head of an older assistant message that led to tool calls; the rest is in the store.

    The head usually states the intent; the calls and their outcomes stay in
    the request, so what was done stays visible.
    """
    head = content[:REASONING_HEAD_CHARS]
    cut = head.rfind(" ")
    if cut > REASONING_HEAD_CHARS // 2:
        head = head[:cut]
    return f'{head.rstrip()}… {REASONING_MARK}: {len(content) - len(head):,} chars; stowage_fetch(handle="{handle}")]'


def cut_arguments(arguments: str, max_chars: int, handle: str) -> str:
    """Arguments over ``max_chars`` with long strings cut; valid JSON naming where the whole text is."""
    shrunk = shrink_json_arguments(arguments, max_chars)
    try:
        value: Any = json.loads(shrunk)
    except ValueError:
        value = {}
    if not isinstance(value, dict):
        value = {"value": value}
    value[ARGUMENTS_KEY] = f'cut to save context; the full arguments: stowage_fetch(handle="{handle}")'
    return json.dumps(value, ensure_ascii=False)
