"""The words of every stub: one-line stand-ins for tool outputs, and cut tool-call arguments.

A stub has to let the model reason about what it no longer sees: which tool,
called how, how big the output was, whether it succeeded, and where its bytes
are.  Compaction (``prune.py``, with the store through
``store_session/stubs.py``) and the lean view (``view/lean.py``) both write
their stubs here, in one family: ``[stowage: output <state>] call -> verdict;
size; stowage_fetch(handle="...")``, the handle always naming the original
bytes.  Pure and deterministic (same input, same text: the prompt cache
depends on it); the store side decides the handle.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

from ...blobstore.presentation.excerpt_json import plural
from ..redaction.masking import mask
from .markers import DUPLICATE_PREFIX, PRUNED_PREFIX, STORED_PREFIX, STUB_PREFIXES, VIEW_STUB_PREFIX

ARGUMENTS_KEY = "_stowage_arguments"  # the key a cut argument object gains, naming where the whole text is

_STATUS_FIELD = re.compile(r'"(exit_code|returncode|exitCode|status)"\s*:\s*(-?\d+|"[^"]{0,40}")')
_ERROR_FIELD = re.compile(r'"(error)"\s*:\s*("(?:[^"\\]|\\.){1,200}")')
_FAILED_FLAG = re.compile(r'"success"\s*:\s*false')
_SCAN_CHARS = 512  # the end of a command output searched for an error word (its verdict is there)
_HEAD_SCAN_CHARS = 256  # and its start (setup failures)
_JSON_SCAN_CHARS = 512  # each end of a JSON output searched for status fields (top-level ones sit at an end)
_STATUS_HINTS = ('code"', '"status"')  # every status key holds one: "exit_code", "returncode", "exitCode", "status"
_ERROR_HINTS = ('"error"',)
_ERROR_WORDS = ("error", "exception", "traceback", "fail", "fatal", "panic", "denied", "not found")
_GIST_VALUE_CHARS = 60
_GIST_TOTAL_CHARS = 160
_MEMO_ARGUMENT_CHARS = 8_192  # longer arguments (a file written whole) are masked each time, not memoised


class PrunedOutput(NamedTuple):
    """A tool result leaving the window, with everything a renderer needs.

    A named tuple: one is built per pruned output, and a frozen dataclass
    costs several times more to construct.
    """

    index: int  # type: ignore[assignment]  # the message's position; shadows tuple.index, which nothing calls
    tool_call_id: str
    tool_name: str
    arguments: str
    content: str
    duplicate_of_call_id: str | None = None


@dataclass(frozen=True)
class StubHandle:
    """The handle a stub names (``store_session/stubs.StubService.stub_handle``) and why it names it.

    ``original_evicted``: the text is a spill preview whose original the size
    cap evicted, so ``handle`` names the preview's own bytes (``view_stub``
    says so); answered by the same lookup that chose the handle.
    """

    handle: str
    original_evicted: bool = False


def is_stub(text: str) -> bool:
    """True when ``text`` is already a Stowage stub (never prune it twice)."""
    return text.startswith(STUB_PREFIXES)


def argument_gist(arguments: str) -> str:
    """``key=value`` pairs of a call's arguments, strings quoted and shortened, secrets masked.

    The arguments are masked whole (:func:`..redaction.masking.mask`) before any value
    is cut: a gist cut at 60 characters can hold part of a URL password or
    a JSON password that no rule recognises once cut, and stubs reach the
    summary model at a later compaction.  Arguments without a secret give
    the gist they always gave.  Memoised (masking costs far more than the
    gist, and one call's gist is asked for by the stub, the store and the
    view); very long arguments are not kept in the memo.
    """
    if len(arguments) > _MEMO_ARGUMENT_CHARS:
        return _gist(mask(arguments))
    return _memo_gist(arguments)


@lru_cache(maxsize=1024)
def _memo_gist(arguments: str) -> str:
    return _gist(mask(arguments))


def _gist(arguments: str) -> str:
    try:
        parsed: Any = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return _shorten(arguments.replace("\n", " "), _GIST_TOTAL_CHARS)
    if not isinstance(parsed, dict):
        return _shorten(json.dumps(parsed, ensure_ascii=False), _GIST_TOTAL_CHARS)
    pieces = []
    for key, value in parsed.items():
        if isinstance(value, str):
            shown = _quote(_shorten(value.replace("\n", " "), _GIST_VALUE_CHARS))
        elif value is None or isinstance(value, (bool, int, float)):
            shown = json.dumps(value)
        else:
            shown = _shorten(json.dumps(value, ensure_ascii=False), _GIST_VALUE_CHARS)
        pieces.append(f"{key}={shown}")
    return _shorten(", ".join(pieces), _GIST_TOTAL_CHARS)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def outcome_of(content: str) -> str:
    """A short verdict: exit code, error flag or the first error-looking line.

    Reads only the head and tail of the output with substring searches and a
    few anchored regexes (no JSON parsing), so stubbing a 100 MB output costs
    what stubbing a 10 KB one does.
    """
    if content[:256].lstrip()[:1] in ("{", "["):
        verdict = _json_verdict(content[:_JSON_SCAN_CHARS], content[-_JSON_SCAN_CHARS:], content)
        if verdict:
            return verdict
    # Command output ends with its verdict and starts with its setup: look at
    # both ends (a bounded window each), the end first.  One string holds both
    # (a newline between them, which no error word contains), so the first hit
    # is in the end when there is one there.
    window = content if len(content) <= _SCAN_CHARS else f"{content[-_SCAN_CHARS:]}\n{content[:_HEAD_SCAN_CHARS]}"
    first = _first_error_word(window.lower())
    if first == -1:
        return "ok"
    line_start = window.rfind("\n", 0, first) + 1
    line_end = window.find("\n", first)
    line = window[line_start : line_end if line_end != -1 else len(window)].strip()
    return "error: " + _shorten(line, 120)


def _json_verdict(head: str, tail: str, content: str) -> str | None:
    """Status, error or success fields of a JSON output; ``ok`` for plain data; None when unsure."""
    both = head if len(head) >= len(content) else head + tail  # one substring scan per key
    for hints, field in ((_STATUS_HINTS, _STATUS_FIELD), (_ERROR_HINTS, _ERROR_FIELD)):
        if not any(hint in both for hint in hints):
            continue  # a substring test is far cheaper than the regex scan
        match = field.search(tail) or field.search(head)
        if match:
            if field is _ERROR_FIELD:
                try:
                    message = str(json.loads(match.group(2)))
                except ValueError:
                    message = match.group(2).strip('"')
                return "error: " + _shorten(message.replace("\n", " "), 120)
            return f"{match.group(1)} {match.group(2).strip(chr(34))}"
    if '"success"' in both and (_FAILED_FLAG.search(head) or _FAILED_FLAG.search(tail)):
        return "success=false"
    if content[-256:].rstrip().endswith(("}", "]")):
        return "ok"  # a complete JSON document with no status or error field: data, not a failure
    return None


def _first_error_word(lowered: str) -> int:
    """Position of the first error word (one ``str.find`` per word beats a regex alternation)."""
    first = -1
    for word in _ERROR_WORDS:
        at = lowered.find(word, 0, first + len(word) if first != -1 else len(lowered))
        if at != -1:
            first = at
    return first


def size_description(content: str) -> str:
    lines = content.count("\n") + 1 if content else 0
    return f"{len(content):,} chars, {plural(lines, 'line')}"


def fetch_hint(handle: str) -> str:
    """How every stub names where its bytes are (``store_session/pins.py`` reads the handle back)."""
    return f'stowage_fetch(handle="{handle}")'


def default_stub(output: PrunedOutput) -> str:
    """Compaction's stub when no store is attached (nothing to fetch)."""
    call = _call(output)
    if output.duplicate_of_call_id:
        return (
            f"{DUPLICATE_PREFIX} {call}: identical to the later result of call "
            f"{output.duplicate_of_call_id}; {size_description(output.content)}"
        )
    return f"{PRUNED_PREFIX} {call} -> {outcome_of(output.content)}; {size_description(output.content)}"


def stored_stub(output: PrunedOutput, handle: str) -> str:
    """Compaction's stub when the store keeps the output: ``handle`` names its original bytes.

    The stub stays in the history, where a summary model may later read it
    without the call above it: it carries the call's argument gist.
    """
    return (
        f"{STORED_PREFIX} {_call(output)} -> {outcome_of(output.content)}; {size_description(output.content)}; "
        f"{fetch_hint(handle)}"
    )


ORIGINAL_EVICTED_NOTE = "the size cap evicted the whole output: this handle reads its preview"


def view_stub(
    tool_name: str, content: str, handle: str | None, kept: str = "", *, original_evicted: bool = False
) -> str:
    """The lean view's stub: one line for an output a request leaves out, then the lines ``kept`` of it (if any).

    The call it answers stands just above it in the same request, so the
    stub names only the tool.  ``handle`` names the original bytes; None
    for Stowage's own read-back tools, whose output the call reproduces.
    ``kept`` is a digest of the lines agents quote (``view/stub_digest.py``).
    ``original_evicted``: ``content`` is a spill preview whose whole output
    the store's size cap evicted; ``handle`` names the preview, and the stub
    says so.
    """
    head = f"{VIEW_STUB_PREFIX} {tool_name or 'tool'} -> {outcome_of(content)}; {len(content):,} chars"
    if original_evicted and handle is not None:
        head += f"; {ORIGINAL_EVICTED_NOTE}"
    line = f"{head}; repeat the call to read it again" if handle is None else f"{head}; {fetch_hint(handle)}"
    return f"{line}\n{kept}" if kept else line


def _call(output: PrunedOutput) -> str:
    return f"{output.tool_name or 'tool'}({argument_gist(output.arguments)})"


def cut_arguments(arguments: str, max_chars: int, handle: str) -> str:
    """Arguments over ``max_chars`` with long strings cut; valid JSON naming where the whole text is."""
    shrunk = shrink_json_arguments(arguments, max_chars)
    try:
        value: Any = json.loads(shrunk)
    except ValueError:
        value = {}
    if not isinstance(value, dict):
        value = {"value": value}
    value[ARGUMENTS_KEY] = f"cut to save context; the full arguments: {fetch_hint(handle)}"
    return json.dumps(value, ensure_ascii=False)


def shrink_json_arguments(text: str, max_chars: int) -> str:
    """Cut long string values inside JSON arguments; the result stays valid JSON.

    Unparseable arguments become ``{"_stowage_truncated_arguments": "<head>"}``
    so providers that validate arguments accept the message.  The text is
    masked whole first (:func:`..redaction.masking.mask`): a password cut before its
    ``@`` or closing quote would stay in the history as a fragment no rule
    knows and reach the summary model at the next compaction.  Callers keep
    the whole original (the store); arguments without a secret cut as before.
    """
    text = mask(text)
    try:
        value = json.loads(text)
    except ValueError:
        return json.dumps({"_stowage_truncated_arguments": text[: max(40, max_chars - 60)] + "…"}, ensure_ascii=False)
    limit = max(40, max_chars // 2)
    while limit >= 20:
        shrunk = json.dumps(_cut_strings(value, limit), ensure_ascii=False)
        if len(shrunk) <= max_chars:
            return shrunk
        limit //= 2
    return shrunk


def _cut_strings(value: Any, limit: int) -> Any:
    if isinstance(value, str):
        return value if len(value) <= limit else f"{value[:limit]}…[+{len(value) - limit} chars]"
    if isinstance(value, dict):
        return {k: _cut_strings(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        if len(value) > 20:
            return [_cut_strings(v, limit) for v in value[:20]] + [f"…[+{len(value) - 20} items]"]
        return [_cut_strings(v, limit) for v in value]
    return value


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
