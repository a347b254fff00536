"""Read OpenAI-format transcripts and chain them into long sessions.

The shared data set holds one JSON object a line (``{id, source, license,
meta, messages}``, gzip or plain).  :func:`read_transcripts` streams them;
:func:`chain_sessions` groups consecutive transcripts, in file order, into
sessions of ``chain`` transcripts each, so a session passes a 128k window
several times.  A chained session keeps the first transcript's system
message; each later transcript's opening user message simply becomes the next
user turn (its own system message is dropped), and every tool-call id is
prefixed with the transcript's position (``t<k>_``) so ids stay unique.
``Session.starts`` says where each later transcript begins: the recorded
agent of that transcript never saw the messages before it.
Nothing is random: the same file and ``chain`` give the same sessions.

:func:`clean_transcript` also makes each transcript a valid conversation
before replay: non-string tool-call fields are parsed (the data stores
``tool_calls`` as Python-literal strings in places), calls without a result
are dropped, results without a call are dropped.
"""

from __future__ import annotations

import ast
import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from ....blobstore import safe_json

DEFAULT_CHAIN = 7  # 20k-104k tokens each: ~7 of them make ~350k tokens, past a 128k window several times


@dataclass
class Transcript:
    id: str
    messages: list[dict[str, Any]]
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Session:
    id: str
    messages: list[dict[str, Any]]
    parts: list[str]
    # message indices where a later transcript begins: the recorded agent there had seen nothing before it
    starts: list[int] = field(default_factory=list)


class DataMissing(FileNotFoundError):
    """The transcript file is absent (benchmarks skip with this message)."""


def read_transcripts(
    path: str | Path, limit: int | None = None, on_bad_line: Callable[[int, str], None] | None = None
) -> Iterator[Transcript]:
    """The file's transcripts in order; a line that is not a transcript (junk, too deep, too long) is
    skipped, named to ``on_bad_line(line number, reason)``, and the lines after it are still read."""
    path = Path(path)
    if not path.is_file():
        raise DataMissing(f"transcript file not found: {path}")
    opener: Callable[..., Any] = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as handle:
        count = 0
        for number, record in safe_json.iter_lines_of(handle):
            if limit is not None and count >= limit:
                return
            if isinstance(record, safe_json.JsonRejected):
                if on_bad_line is not None:
                    on_bad_line(number, record.reason)
                continue
            messages = record.get("messages") if isinstance(record, dict) else record
            if not isinstance(messages, list):
                if on_bad_line is not None:
                    on_bad_line(number, "not a transcript (no list of messages)")
                continue
            ident = str(record.get("id") or f"line{number}") if isinstance(record, dict) else f"line{number}"
            raw_meta = record.get("meta") if isinstance(record, dict) else None
            meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
            count += 1
            yield Transcript(ident, clean_transcript(messages), meta)


LITERAL_CHARS = 1_000_000  # a Python-literal tool-call string longer than this is not parsed


def _parse_calls(raw: Any) -> list[dict[str, Any]]:
    if isinstance(raw, str):
        try:
            raw = safe_json.loads(raw)
        except safe_json.JsonRejected:
            if len(raw) > LITERAL_CHARS:
                return []
            try:
                raw = ast.literal_eval(raw)
            except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
                return []
            if safe_json.depth_of(raw) > safe_json.MAX_DEPTH:
                return []
    if not isinstance(raw, list):
        return []
    calls = []
    for call in raw:
        if not isinstance(call, dict):
            continue
        raw_function = call.get("function")
        function: dict[str, Any] = raw_function if isinstance(raw_function, dict) else {}
        arguments = function.get("arguments", "{}")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        calls.append(
            {
                "id": str(call.get("id") or ""),
                "type": "function",
                "function": {"name": str(function.get("name") or ""), "arguments": arguments},
            }
        )
    return calls


def clean_transcript(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """A valid OpenAI conversation from one recorded transcript."""
    out: list[dict[str, Any]] = []
    pending: dict[str, dict[str, Any]] = {}  # call id -> assistant message, until its result arrives
    answered: set[str] = set()
    for raw in messages:
        if not isinstance(raw, dict) or raw.get("role") not in ("system", "user", "assistant", "tool"):
            continue
        role = raw["role"]
        content = raw.get("content")
        content = content if isinstance(content, (str, list)) else ("" if content is None else str(content))
        if role == "tool":
            call_id = str(raw.get("tool_call_id") or "")
            if call_id not in pending or call_id in answered:
                continue
            answered.add(call_id)
            out.append({"role": "tool", "tool_call_id": call_id, "content": content})
            continue
        message: dict[str, Any] = {"role": role, "content": content}
        if role == "assistant":
            calls = _parse_calls(raw.get("tool_calls"))
            if calls:
                message["tool_calls"] = calls
                for call in calls:
                    pending[call["id"]] = message
        out.append(message)
    # drop calls never answered (and an assistant left with nothing)
    for message in out:
        present = message.get("tool_calls")
        if present:
            kept = [c for c in present if c["id"] in answered]
            if kept:
                message["tool_calls"] = kept
            else:
                del message["tool_calls"]
    # a tool result must directly follow its call's batch: drop strays
    valid: list[dict[str, Any]] = []
    open_ids: set[str] = set()
    for message in out:
        if message["role"] == "tool":
            if message["tool_call_id"] in open_ids:
                open_ids.discard(message["tool_call_id"])
                valid.append(message)
            continue
        if message["role"] == "assistant" and open_ids:
            _strip_unanswered(valid, open_ids)
        open_ids = {c["id"] for c in message.get("tool_calls", [])}
        valid.append(message)
    if open_ids:
        _strip_unanswered(valid, open_ids)
    return [m for m in valid if m["role"] != "assistant" or m.get("content") or m.get("tool_calls")]


def _strip_unanswered(valid: list[dict[str, Any]], open_ids: set[str]) -> None:
    for message in reversed(valid):
        if message["role"] == "assistant":
            kept = [c for c in message.get("tool_calls", []) if c["id"] not in open_ids]
            if kept:
                message["tool_calls"] = kept
            else:
                message.pop("tool_calls", None)
            return


def _retag(message: dict[str, Any], prefix: str) -> dict[str, Any]:
    message = dict(message)
    if message.get("tool_calls"):
        message["tool_calls"] = [{**c, "id": prefix + c["id"]} for c in message["tool_calls"]]
    if message.get("role") == "tool":
        message["tool_call_id"] = prefix + message["tool_call_id"]
    return message


def chain_transcripts(transcripts: list[Transcript], session_id: str = "") -> Session:
    """One session from several transcripts (see the module docstring)."""
    messages: list[dict[str, Any]] = []
    starts: list[int] = []
    for position, transcript in enumerate(transcripts):
        prefix = f"t{position}_"
        if position:
            starts.append(len(messages))
        for message in transcript.messages:
            if message["role"] == "system":
                if position == 0 and not messages:
                    messages.append(dict(message))
                continue
            messages.append(_retag(message, prefix))
    ident = session_id or "+".join(t.id for t in transcripts)
    return Session(ident, messages, [t.id for t in transcripts], starts)


def chain_sessions(transcripts: Iterable[Transcript], chain: int = DEFAULT_CHAIN) -> Iterator[Session]:
    """Consecutive groups of ``chain`` transcripts (the last group may be shorter)."""
    chain = max(1, int(chain))
    group: list[Transcript] = []
    number = 0
    for transcript in transcripts:
        group.append(transcript)
        if len(group) == chain:
            yield chain_transcripts(group, f"session-{number:03d}")
            number += 1
            group = []
    if group:
        yield chain_transcripts(group, f"session-{number:03d}")
