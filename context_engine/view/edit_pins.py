"""Pins for the files the agent is editing: the newest read of a file a later call edits.

An agent edits a file after reading it, and it quotes the read for the next
edit (the line to replace, the indentation, the names around it).  When a
tool call edits or writes a path that an earlier output showed (``read_file``,
or a shell ``cat`` / ``nl`` / ``sed -n`` / ``head`` of it), the newest such
output is pinned from the editing message for ``pin_turns`` model turns, like
an output read back with ``stowage_fetch``.

Paths come from the calls alone (the host's ``path`` argument or the words of
a shell command), never from the file system: the pins are a pure function of
the history, so the plan stays one, and an output stubbed before the edit
stays stubbed.
"""

from __future__ import annotations

import json
import re
import shlex
from functools import lru_cache
from typing import Any, Callable, Sequence

from ..chat.messages import call_arguments_text, call_id, call_name, tool_calls_of, tool_result_id

_READERS = frozenset({"cat", "nl", "head", "tail", "less", "more", "bat", "sed", "awk"})
_EDIT_TOOLS = frozenset({"write_file", "patch", "edit_file", "str_replace_editor", "apply_patch"})
_PATH = re.compile(r"^(?:\.{0,2}/)?[\w.@+-]+(?:/[\w.@+-]+)*\.\w{1,8}$")  # a file path with an extension
_REDIRECT = re.compile(r"(?:^|[^\d&<>])>>?\s*([^\s;&|<>]+)")
_OPEN_FOR_WRITE = re.compile(r"""open\(\s*['"]([^'"]+)['"]\s*,\s*['"][wa]""")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add) File: (\S+)", re.MULTILINE)
_UNIFIED_TARGET = re.compile(r"^\+\+\+ (?:b/)?(\S+)", re.MULTILINE)
_PATH_WORD = re.compile(r"[\w./@+-]+")
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")


def edit_pins(
    messages: Sequence[Any], pin_end: Callable[[int], int], named: bool = False
) -> dict[int, list[tuple[int, int]]]:
    """Output index -> ``(start, end)`` pins: from each message that edits a file its newest read showed.

    With ``named``, any call whose arguments name the file pins it (a search in
    it, a read of another part, a test run of it), not only an edit.
    """
    readers: dict[str, str] = {}  # call id -> path it read
    newest_read: dict[str, int] = {}  # path -> index of the newest output that showed it
    pins: dict[int, list[tuple[int, int]]] = {}
    for index, message in enumerate(messages):
        if message.__class__ is not dict:
            continue
        role = message.get("role")
        if role == "tool":
            path = readers.get(tool_result_id(message))
            if path is not None:
                newest_read[path] = index
            continue
        if role != "assistant":
            continue
        edited: set[int] = set()
        for call in tool_calls_of(message):
            name, arguments = call_name(call), call_arguments_text(call)
            for path in named_paths(name, arguments) if named else edited_paths(name, arguments):
                read = _newest(newest_read, path)
                if read is not None:
                    edited.add(read)
            read_path = read_path_of(name, arguments)
            if read_path is not None and call_id(call):
                readers[call_id(call)] = read_path
        if edited:
            end = pin_end(index)
            for read in sorted(edited):
                pins.setdefault(read, []).append((index, end))
    return pins


def _newest(newest_read: dict[str, int], path: str) -> int | None:
    """The newest read of ``path``; ``/repo/a/b.py`` and ``a/b.py`` are the same file."""
    if path in newest_read:
        return newest_read[path]
    same = [at for read, at in newest_read.items() if read.endswith("/" + path) or path.endswith("/" + read)]
    return max(same) if same else None


@lru_cache(maxsize=8192)  # every request replays the whole history: each call is parsed once
def read_path_of(tool_name: str, arguments: str) -> str | None:
    """The one file a call reads whole or in part (None: not a read, or more than one file)."""
    value = _arguments(arguments)
    if tool_name == "read_file":
        path = value.get("path")
        return normalized(path) if isinstance(path, str) and path.strip() else None
    command = value.get("command")
    if not isinstance(command, str) or "\n" in command.strip():
        return None
    stages = command.split("|")
    words = _words(stages[0])
    if not words or words[0].rsplit("/", 1)[-1] not in _READERS or "-i" in words or ">" in command:
        return None
    paths = {normalized(w) for w in words[1:] if not w.startswith("-") and _PATH.match(w)}
    return paths.pop() if len(paths) == 1 else None


@lru_cache(maxsize=8192)
def edited_paths(tool_name: str, arguments: str) -> frozenset[str]:
    """The files a call edits or writes, as far as its arguments say."""
    value = _arguments(arguments)
    found: set[str] = set()
    if tool_name in _EDIT_TOOLS:
        for key in ("path", "file_path", "filename"):
            if isinstance(value.get(key), str) and value[key].strip():
                found.add(normalized(value[key]))
        patch = value.get("patch")
        if isinstance(patch, str):
            found.update(normalized(p) for p in _PATCH_FILE.findall(patch))
    command = value.get("command")
    if isinstance(command, str):
        found |= _shell_edits(command)
    return frozenset(found)


@lru_cache(maxsize=8192)
def named_paths(tool_name: str, arguments: str) -> frozenset[str]:
    """Every file path a call's arguments name (with an extension), edits included."""
    found = set(edited_paths(tool_name, arguments))
    for value in _string_values(_arguments(arguments)):
        found.update(normalized(word) for word in _PATH_WORD.findall(value) if _PATH.match(word))
    return frozenset(found)


def _string_values(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _string_values(item)]
    if isinstance(value, list):
        return [s for item in value for s in _string_values(item)]
    return []


def _shell_edits(command: str) -> set[str]:
    found: set[str] = set()
    for line in _shell_lines(command):
        words = _words(line)
        if words and words[0] in ("sed", "perl") and any(w.startswith(("-i", "-pi")) for w in words):
            found.update(normalized(w) for w in words[1:] if _PATH.match(w))
        found.update(normalized(p) for p in _REDIRECT.findall(line) if _PATH.match(p))
    found.update(normalized(p) for p in _OPEN_FOR_WRITE.findall(command))
    found.update(normalized(p) for p in _UNIFIED_TARGET.findall(command) if p != "/dev/null")
    return found


def _shell_lines(command: str) -> list[str]:
    """The command's own lines, here-document bodies left out (a ``>`` in Python code is no redirect)."""
    lines, terminator = [], None
    for line in command.splitlines():
        if terminator is not None:
            if line.strip() == terminator:
                terminator = None
            continue
        lines.append(line)
        marker = _HEREDOC.search(line)
        if marker:
            terminator = marker.group(1)
    return lines


def normalized(path: str) -> str:
    """A path as the calls compare it: no ``./``, no quotes, no trailing spaces."""
    path = path.strip().strip("'\"")
    while path.startswith("./"):
        path = path[2:]
    return path


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command, posix=True)
    except ValueError:
        return command.split()


def _arguments(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments) if arguments else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
