"""A re-read always works: the host's read dedup against what the request showed.

Hermes (0.13.0 and newer) remembers, per ``task_id``, which file regions
``read_file`` returned; a second read of an unchanged region answers
``{"status": "unchanged", ...}`` ("refer to the earlier read_file result"),
a third a BLOCKED error.  The CLI passes its session id as ``task_id``, so
this holds across the whole session and is reset only when a compaction (or
a prune) commits.  When the lean view has sent the earlier result as a stub,
the model would be told to refer to content it cannot see.

:func:`reread_answer` decides, over plain messages, whether such a dedup
answer must be replaced: by the earlier read's output as the history holds
it (what the host stored after ``transform_tool_result``, so spill rules are
already applied), whenever the request the model answered did not carry
that output verbatim.  The glue calls it from ``transform_tool_result``.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..chat.messages import (
    Message,
    call_arguments_text,
    call_id,
    call_name,
    message_text,
    role_of,
    tool_calls_of,
    tool_result_id,
)

READ_TOOL = "read_file"
# the start of the host's third-time answer (tools/file_tools.py, 0.13.0 to 0.22.2)
_BLOCKED_PREFIX = "BLOCKED: You have called read_file on this"
# read_file's defaults, the same on every host of the matrix
_DEFAULT_OFFSET, _DEFAULT_LIMIT = 1, 500


def is_dedup_answer(tool_name: str, result: Any) -> bool:
    """True for the host's "unchanged" or BLOCKED answer to a repeated ``read_file``."""
    if tool_name != READ_TOOL or not isinstance(result, str) or not result.startswith("{"):
        return False
    try:
        data = json.loads(result)
    except ValueError:
        return False
    if not isinstance(data, dict):
        return False
    if data.get("status") == "unchanged" and data.get("dedup") is True:
        return True
    error = data.get("error")
    return isinstance(error, str) and error.startswith(_BLOCKED_PREFIX)


def read_key(arguments: Any) -> tuple[str, str, str] | None:
    """The region a ``read_file`` call reads, as the host keys its dedup (path, offset, limit)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if not isinstance(arguments, dict):
        return None
    path = arguments.get("path")
    if not isinstance(path, str) or not path.strip():
        return None
    offset = arguments.get("offset", _DEFAULT_OFFSET)
    limit = arguments.get("limit", _DEFAULT_LIMIT)
    return os.path.normpath(os.path.expanduser(path.strip())), str(offset), str(limit)


def earlier_read_output(key: tuple[str, str, str], history: list[Message]) -> str | None:
    """The newest output of a ``read_file`` of ``key`` in ``history`` that carries content."""
    outputs = {tool_result_id(m): message_text(m) for m in history if role_of(m) == "tool"}
    for message in reversed(history):
        for call in reversed(tool_calls_of(message)):
            if call_name(call) != READ_TOOL or read_key(call_arguments_text(call)) != key:
                continue
            output = outputs.get(call_id(call))
            if output and not is_dedup_answer(READ_TOOL, output):
                return output
    return None


def reread_answer(
    tool_name: str, arguments: Any, result: Any, history: list[Message], sent: list[Message] | None
) -> str | None:
    """What the model should get instead of the host's dedup answer ``result``, or None to keep it.

    ``history`` is the conversation of the request the model answered with
    this call, ``sent`` that request as it went out (None: the history was
    sent unchanged).  The earlier output is returned when the request did
    not carry it verbatim (a view stub); None when it did (the host's answer
    is right), when ``result`` is not a dedup answer, or when the history no
    longer holds the earlier read (the host resets its dedup on compaction).
    """
    if not is_dedup_answer(tool_name, result):
        return None
    key = read_key(arguments)
    if key is None:
        return None
    output = earlier_read_output(key, history)
    if output is None:
        return None
    shown = history if sent is None else sent
    if any(role_of(m) == "tool" and message_text(m) == output for m in shown):
        return None
    return output
