"""The words of the lean view: stub texts for old outputs and cut arguments.

A view stub must be short (it is sent with every later request) and still
tell the model what it no longer sees: the tool, the gist of its arguments,
the size, the verdict, and how to read it back.  Same input, same text: the
prompt cache depends on it.
"""

from __future__ import annotations

import json
from typing import Any

from ..prune import shrink_json_arguments
from ..stubs import argument_gist, outcome_of

VIEW_STUB_PREFIX = "[stowage: older output, not repeated]"
ARGUMENTS_KEY = "_stowage_arguments"
GIST_CHARS = 120


def output_stub(tool_name: str, arguments: str, content: str, handle: str | None) -> str:
    """One line for a tool output the request leaves out.

    ``handle`` is where its bytes are stored; None for Stowage's own read-back
    tools, whose output the same call reproduces.
    """
    gist = argument_gist(arguments)
    if len(gist) > GIST_CHARS:
        gist = gist[:GIST_CHARS - 1] + "…"
    call = f"{tool_name or 'tool'}({gist})"
    size = f"{len(content):,} chars"
    if handle is None:
        return f"{VIEW_STUB_PREFIX} {call} -> {outcome_of(content)}; {size}; repeat the call to read it again"
    return f'{VIEW_STUB_PREFIX} {call} -> {outcome_of(content)}; {size}; stowage_fetch(handle="{handle}")'


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
