"""The lines of an old output that agents quote, kept in its view stub.

A stub that only names the tool, the verdict and a handle costs a
``stowage_fetch`` round trip whenever the agent needs one line back.  What
agents quote from an output depends on what the output is:

* a search (``grep``, ``search_files``): the matching lines;
* a file read (``cat``, ``sed -n``, ``read_file``): the ``def`` / ``class`` /
  import lines, which name what the file holds;
* a test or script run: the failing assertion, the error and the traceback
  frames (innermost first);
* a listing (``ls``, ``find``): the entries' names.

:func:`digest` picks those lines within a character budget, so a stub carries
them when that is cheaper than a fetch.  It is a pure function of the tool's
name, arguments and output (the same output gives the same digest in every
request and every process: stubs keep their bytes, the prompt cache holds).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from typing import Any

from .quotes import looks_like_code

MAX_LINE_CHARS = 160  # a kept line is cut here (minified code, long log lines)
MIN_SHARE = 4  # the digest is at most a quarter of the output: otherwise the output is not worth a stub with it

SEARCH, READ, RUN, LISTING = "matching lines", "definitions", "errors", "entries"
NAMES_HEAD = "names: "

_READ_PROGRAMS = frozenset({"cat", "nl", "head", "tail", "less", "more", "bat", "awk"})
_SEARCH_PROGRAMS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "git-grep"})
_LIST_PROGRAMS = frozenset({"ls", "find", "tree", "fd", "git-ls-files"})
_RUN_WORDS = re.compile(
    r"\b(?:pytest|unittest|runtests|tox|nosetests|manage\.py\s+test|python[\d.]*|node|npm|cargo|go)\b"
)
_GREP_LINE = re.compile(r"^[^\s:]+:\d+[:-]")
_NUMBER_PREFIX = re.compile(r"^\s*\d+(?:\t|\s*[|:]\s?| {2,})")  # `nl -ba`, read_file's `12|`, `cat -n`
_DEFINITION = re.compile(
    r"^\s*(?:@\w|(?:async\s+)?def\s|class\s|(?:export\s+)?(?:async\s+)?function\s|func\s|fn\s|pub\s+fn\s|"
    r"(?:public|private|protected)\s[\w<>\[\], ]*\(|interface\s|struct\s|impl\b)"
)
_IMPORT = re.compile(r"^\s*(?:import\s|from\s+\S+\s+import\s|#include\s|use\s+\w|require\()")
_ERROR = re.compile(
    r"(?:^E\s{2,}|^(?:FAIL|ERROR|FAILED)\b|\bassert(?:ion)?\w*\b|^\w+(?:\.\w+)*(?:Error|Exception|Warning)\b|"
    r"^Traceback\b|\bError:|\bFAILED\b|^Ran \d+ tests?|^OK\b)",
    re.IGNORECASE,
)
_FRAME = re.compile(r'^\s*File "[^"]+", line \d+')
_NAME = re.compile(r"[A-Za-z_][\w./-]*\w")


@dataclass(frozen=True)
class Digest:
    """The kept lines (in output order), what they are, how many such lines the output had; the names kept."""

    kind: str
    lines: tuple[str, ...]
    of: int
    names: tuple[str, ...] = ()

    def render(self) -> str:
        parts = []
        if self.lines:
            more = f" of {self.of}" if self.of > len(self.lines) else ""
            parts += [f"{self.kind} ({len(self.lines)}{more}):", *self.lines]
        if self.names:
            parts.append(f"{NAMES_HEAD}{', '.join(self.names)}")
        return "\n".join(parts)


def digest(tool_name: str, arguments: str, output: str, budget_chars: int, names: bool = False) -> Digest | None:
    """The lines of ``output`` an agent would quote, within ``budget_chars``; None when none fit or none apply.

    With ``names``, the lines take at most half the budget and the rest lists
    the output's identifiers and paths not in those lines, the most used first
    (what an agent names when it writes code against the output).
    """
    budget = min(budget_chars, len(output) // MIN_SHARE)
    if budget <= 0:
        return None
    text = _plain_output(output)
    lines = text.splitlines()
    kind = output_kind(tool_name, arguments, lines)
    ranked = _candidates(kind, lines) if kind is not None else []
    chosen = _fit(lines, ranked, budget // 2 if names else budget)
    kept = tuple(chosen[i] for i in sorted(chosen))
    listed = _names(text, kept, budget - sum(len(line) + 1 for line in kept)) if names else ()
    if not kept and not listed:
        return None
    return Digest(kind or "lines", kept, len(ranked), listed)


def _fit(lines: list[str], ranked: list[int], budget: int) -> dict[int, str]:
    chosen: dict[int, str] = {}
    used = 0
    for index in ranked:
        line = _shown(lines[index])
        if line in chosen.values():
            continue
        cost = len(line) + 1
        if used + cost > budget:
            continue  # a shorter, lower-ranked line may still fit
        chosen[index] = line
        used += cost
    return chosen


def _names(text: str, kept: tuple[str, ...], budget: int) -> tuple[str, ...]:
    """The output's code names not shown in ``kept``, most frequent first (ties: first seen), within ``budget``."""
    budget -= len(NAMES_HEAD) + 1
    if budget <= 0:
        return ()
    shown = "\n".join(kept)
    first: dict[str, int] = {}
    for match in _NAME.finditer(text):
        token = match.group().rstrip(".:-/")
        if token not in first and looks_like_code(token) and token not in shown:
            first[token] = match.start()
    ranked = sorted(first, key=lambda t: (-text.count(t), first[t]))
    listed: list[str] = []
    used = 0
    for token in ranked:
        cost = len(token) + 2
        if used + cost <= budget:
            listed.append(token)
            used += cost
    return tuple(listed)


def output_kind(tool_name: str, arguments: str, lines: list[str]) -> str | None:
    """What the output is, from the tool, its command and the output's shape; None: nothing to pick."""
    name = tool_name.lower()
    if name == "search_files":
        return SEARCH
    if name == "read_file":
        return READ
    if name in ("list_directory", "list_files"):
        return LISTING
    programs = _programs(_command(arguments))
    program = programs[0] if programs else ""
    if _SEARCH_PROGRAMS.intersection(programs):
        return SEARCH
    if program in _LIST_PROGRAMS:
        return LISTING
    if any(_FRAME.match(line) or line.startswith("Traceback") for line in lines):
        return RUN
    if program in _READ_PROGRAMS or program == "sed":
        return READ
    command = _command(arguments)
    if command and _RUN_WORDS.search(command):
        return RUN
    grep_like = sum(1 for line in lines[:50] if _GREP_LINE.match(line))
    if grep_like * 2 > min(len(lines), 50):
        return SEARCH
    return None


def _candidates(kind: str, lines: list[str]) -> list[int]:
    """Indices of the lines worth keeping, best first."""
    if kind == SEARCH:
        return [i for i, line in enumerate(lines) if line.strip()]
    if kind == LISTING:
        return [i for i, line in enumerate(lines) if line.strip() and not line.startswith("total ")]
    if kind == READ:
        definitions = [i for i, line in enumerate(lines) if _DEFINITION.match(_code(line))]
        imports = [i for i, line in enumerate(lines) if _IMPORT.match(_code(line))]
        return definitions + imports
    errors = [i for i, line in enumerate(lines) if _ERROR.search(line.strip())]
    frames = [i for i, line in enumerate(lines) if _FRAME.match(line)]
    innermost_first = []
    for i in reversed(frames):  # each frame, then the code line under it
        innermost_first.append(i)
        if i + 1 < len(lines) and not _FRAME.match(lines[i + 1]):
            innermost_first.append(i + 1)
    return list(reversed(errors)) + [i for i in innermost_first if i not in errors]


def _shown(line: str) -> str:
    """A kept line: tabs as spaces, trailing space gone, cut at MAX_LINE_CHARS."""
    line = line.replace("\t", "  ").rstrip()
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "…"


def _code(line: str) -> str:
    return _NUMBER_PREFIX.sub("", line, count=1)


def _plain_output(output: str) -> str:
    """The text of a host's JSON tool result (``{"output": ...}``, ``{"content": ...}``); else the output."""
    if not output.startswith("{"):
        return output
    try:
        value: Any = json.loads(output)
    except ValueError:
        return output
    if isinstance(value, dict):
        for key in ("output", "content", "matches", "result", "stdout"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return output


def _command(arguments: str) -> str:
    try:
        value: Any = json.loads(arguments) if arguments else {}
    except ValueError:
        return ""
    command = value.get("command") if isinstance(value, dict) else None
    return command if isinstance(command, str) else ""


def _programs(command: str) -> list[str]:
    """The programs of a shell command's first pipeline (after ``cd x &&``, env assignments, ``timeout N``)."""
    for part in re.split(r"&&|\|\||;|\n", command):
        programs = [p for p in map(_program, part.split("|")) if p]
        if programs:
            return programs
    return []


def _program(stage: str) -> str:
    try:
        words = shlex.split(stage, posix=True)
    except ValueError:
        words = stage.split()
    while words and ("=" in words[0] and not words[0].startswith("-") or words[0] in ("timeout", "time", "sudo")):
        words = words[1:]
        if words and words[0].replace(".", "").isdigit():
            words = words[1:]
    if not words or words[0] in ("cd", "export", "echo", "set", "source"):
        return ""
    program = words[0].rsplit("/", 1)[-1]
    return f"git-{words[1]}" if program == "git" and len(words) > 1 else program
