"""Outputs a later call makes stale: an older read of the same file, an older run of the same command.

An agent re-runs its reproduction script after each edit and re-reads the
region it changed: the older output is then *superseded*, and the newest one
is what it works with.  :func:`superseded` says, for each output, which later
message superseded it and with what, from the calls and outputs alone (never
the disk), so the plan stays a pure function of the history; a newer output
supersedes only when it is whole (not cut short by the harness, not spilled):

* the same call again (the same tool with the same arguments, whitespace aside);
* a read of the whole file (``cat f``, ``read_file`` without a range) after any read of that file;
* with ``disposable``, a listing (``ls``, ``find``, ``tree``) or an install log (``pip install``, ``apt-get
  install``, ...) by the next call after it: the agent acted on it, and its stub says what it was.

A read of another region of the file (``sed -n 50,80p f`` after ``sed -n 1,40p f``) supersedes nothing: the
older output is still the only copy of its lines.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Sequence

from ..chat.markers import SPILL_HEADER
from ..chat.messages import call_arguments_text, call_id, call_name, tool_calls_of, tool_result_id
from .edit_pins import read_path_of

_WHOLE_FILE_READERS = frozenset({"cat", "bat", "less", "more"})
_CUT_MARKS = ("<output_head>", "<elided_chars>", "<output_tail>", SPILL_HEADER, "[truncated", "... (truncated")
_LISTERS = frozenset({"ls", "find", "tree", "fd"})
_INSTALL = re.compile(
    r"\b(?:pip3?|uv\s+pip|poetry|conda|mamba|apt(?:-get)?|npm|yarn|pnpm|gem|cargo)\s+(?:-\S+\s+)*(?:install|add)\b"
    r"|\bsetup\.py\s+(?:install|develop)\b"
)


@dataclass(frozen=True)
class Superseded:
    at: int  # the message that superseded the output: the newer output, or the call after a listing
    by: str  # what superseded it, as a stub says it


def superseded(messages: Sequence[Any], disposable: bool = False) -> dict[int, Superseded]:
    """Output index -> the first later call that superseded it (outputs never superseded are absent)."""
    newest_run: dict[str, int] = {}  # call key -> the newest output of that call
    reads: dict[str, list[int]] = {}  # path -> outputs that read (part of) it, not superseded yet
    pending: dict[str, tuple[str, str | None, bool]] = {}  # call id -> (call key, path it read, read whole)
    kinds: dict[str, str] = {}  # call id -> "a listing" / "an install log"
    spent: list[tuple[int, str]] = []  # listings and install logs no call has followed yet
    found: dict[int, Superseded] = {}
    for index, message in enumerate(messages):
        if message.__class__ is not dict:
            continue
        role = message.get("role")
        if role == "tool":
            made = pending.pop(tool_result_id(message), None)
            kind = kinds.pop(tool_result_id(message), None)
            if kind is not None:
                spent.append((index, kind))
            if made is not None:
                key, path, whole = made
                if _complete(message.get("content")):  # an output cut short carries only part of what it read
                    earlier = newest_run.get(key)
                    if earlier is not None:
                        found.setdefault(earlier, Superseded(index, "the same call, run again later"))
                    if path is not None and whole:
                        for read in reads.pop(path, []):
                            found.setdefault(read, Superseded(index, f"a later read of the whole of {path}"))
                newest_run[key] = index
                if path is not None:
                    reads.setdefault(path, []).append(index)
            continue
        if role != "assistant":
            continue
        if spent and tool_calls_of(message):
            for output, kind in spent:
                found.setdefault(output, Superseded(index, f"the calls after it ({kind})"))
            spent = []
        for call in tool_calls_of(message):
            name, arguments = call_name(call), call_arguments_text(call)
            key = _call_key(name, arguments)
            path = read_path_of(name, arguments)
            if call_id(call):
                pending[call_id(call)] = (key, path, path is not None and _whole_file(name, arguments))
                kind = _disposable_kind(name, arguments) if disposable else None
                if kind is not None:
                    kinds[call_id(call)] = kind
    return found


def _complete(content: Any) -> bool:
    """Whether an output is whole: not cut by the harness (``<output_head>`` / ``<elided_chars>``) or spilled."""
    text = content if isinstance(content, str) else str(content)
    return not any(mark in text for mark in _CUT_MARKS)


def _disposable_kind(name: str, arguments: str) -> str | None:
    """``a listing`` or ``an install log`` for a call whose output the agent uses once; None otherwise."""
    if name in ("list_files", "list_directory"):
        return "a listing"
    try:
        value: Any = json.loads(arguments) if arguments else {}
    except ValueError:
        return None
    command = value.get("command") if isinstance(value, dict) else None
    if not isinstance(command, str) or any(sep in command.strip() for sep in ("\n", ";", "&&", "||", "|")):
        return None
    if _INSTALL.search(command):
        return "an install log"
    words = command.split()
    if words and words[0].rsplit("/", 1)[-1] in _LISTERS and "-exec" not in words and "-delete" not in words:
        return "a listing"
    return None


def _call_key(name: str, arguments: str) -> str:
    return f"{name}\x00{' '.join(arguments.split())}"


def _whole_file(name: str, arguments: str) -> bool:
    try:
        value: Any = json.loads(arguments) if arguments else {}
    except ValueError:
        return False
    if not isinstance(value, dict):
        return False
    if name == "read_file":
        return not any(value.get(k) for k in ("offset", "limit", "start_line", "end_line"))
    command = value.get("command")
    if not isinstance(command, str):
        return False
    words = command.split()
    return bool(words) and words[0].rsplit("/", 1)[-1] in _WHOLE_FILE_READERS and "|" not in command
