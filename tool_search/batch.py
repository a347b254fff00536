"""Batched bridge calls: several queries, names or calls in one round trip.

Each bridge keeps its single form (``query``, ``name``, ``name`` +
``arguments``) and also takes a list (``queries``, ``names``, ``calls``). A
list is checked entry by entry: an empty, non-string, over-long or duplicate
entry, or one past the per-call limit, gets its own error in its own slot of
the answer, and the other entries still run. One bad entry never runs, and
never hides the rest.

Host-agnostic: calls are resolved (scope, arguments) and run through
callables the session passes in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping

MAX_QUERIES = 7
MAX_NAMES = 10
MAX_CALLS = 10
MAX_QUERY_CHARS = 500
MAX_NAME_CHARS = 200


@dataclass(frozen=True)
class Slot:
    """One entry of a batch: its value when valid, else why not."""

    value: Any
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


class BatchError(ValueError):
    """The batch as a whole is unusable (not a list, empty); the message is for the model."""


def string_slots(
    params: Mapping[str, Any], list_key: str, single_key: str, limit: int, max_chars: int, what: str
) -> list[Slot] | None:
    """Validated entries of ``params[list_key]`` (plus ``params[single_key]`` first, if both are given).

    None when ``list_key`` is absent (the caller uses its single form). A bare
    string in place of the list is taken as a one-entry list.
    """
    if list_key not in params or params.get(list_key) is None:
        return None
    raw = params[list_key]
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, (list, tuple)):
        raise BatchError(f"'{list_key}' must be a list of strings ({what}), got {type(raw).__name__}.")
    single = params.get(single_key)
    entries = ([single] if isinstance(single, str) and single.strip() else []) + list(raw)
    if not entries:
        raise BatchError(f"'{list_key}' is empty: give 1 to {limit} {what}.")
    slots: list[Slot] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, str):
            slots.append(Slot(_show(entry), f"entry {i} is a {type(entry).__name__}, not a string; not run."))
            continue
        text = entry.strip()
        if not text:
            slots.append(Slot(entry, f"entry {i} is empty; not run."))
        elif len(text) > max_chars:
            slots.append(Slot(text[:40] + "…", f"entry {i} is over {max_chars} characters; not run."))
        elif text in seen:
            slots.append(Slot(text, f"entry {i} repeats entry {seen[text]}; not run again."))
        elif i >= limit:
            slots.append(Slot(text, f"over the limit of {limit} {what} per call; not run. Ask again for the rest."))
        else:
            seen[text] = i
            slots.append(Slot(text))
    return slots


def call_slots(params: Mapping[str, Any], limit: int = MAX_CALLS) -> list[Slot] | None:
    """Validated ``calls`` entries (``{"name", "arguments"}`` objects), or None without ``calls``."""
    if "calls" not in params or params.get("calls") is None:
        return None
    raw = params["calls"]
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise BatchError('\'calls\' must be a list of {"name", "arguments"} objects, got a string.') from None
    if isinstance(raw, Mapping):
        raw = [raw]
    if not isinstance(raw, (list, tuple)):
        raise BatchError(f'\'calls\' must be a list of {{"name", "arguments"}} objects, got {type(raw).__name__}.')
    if not raw:
        raise BatchError(f'\'calls\' is empty: give 1 to {limit} {{"name", "arguments"}} objects.')
    slots: list[Slot] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(raw):
        if not isinstance(entry, Mapping):
            slots.append(
                Slot(
                    {"entry": _show(entry)},
                    f'entry {i} is a {type(entry).__name__}, not a {{"name", "arguments"}} object; not run.',
                )
            )
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not name.strip():
            slots.append(Slot({"name": _show(name)}, f"entry {i} has no tool name; not run."))
            continue
        key = json.dumps([name.strip(), entry.get("arguments")], sort_keys=True, default=str)
        if key in seen:
            slots.append(
                Slot(dict(entry), f"entry {i} repeats entry {seen[key]} (same tool, same arguments); not run again.")
            )
        elif i >= limit:
            slots.append(
                Slot(dict(entry), f"over the limit of {limit} calls per call; not run. Ask again for the rest.")
            )
        else:
            seen[key] = i
            slots.append(Slot(dict(entry)))
    return slots


Resolver = Callable[[Mapping[str, Any]], tuple[str, dict[str, Any]]]
Runner = Callable[[str, dict[str, Any]], str]


def run_calls(slots: list[Slot], resolve: Resolver, run: Runner | None, refused: type[Exception]) -> dict[str, Any]:
    """Resolve every valid call first, then run the ones in scope, in order.

    ``resolve`` raises ``refused`` (the bridge's error type) for a call outside
    the session's scope or with bad arguments: that entry gets the error and
    nothing runs for it; the others still run.
    """
    results: list[dict[str, Any]] = []
    for slot in slots:
        name = str(slot.value.get("name") or "") if isinstance(slot.value, Mapping) else ""
        if not slot.ok:
            results.append({"name": name, "error": slot.error})
            continue
        try:
            tool, arguments = resolve(slot.value)
        except refused as exc:
            results.append({"name": name, "error": str(exc)})
            continue
        if run is None:
            results.append({"name": tool, "error": "this host cannot run bridged calls; call the tool directly"})
            continue
        results.append({"name": tool, "result": _as_json(run(tool, arguments))})
    ran = sum(1 for r in results if "result" in r)
    return {"results": results, "ran": ran, "failed": len(results) - ran}


def _as_json(text: Any) -> Any:
    """A tool's result as JSON when it is JSON text, else as the text itself."""
    if isinstance(text, str):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _show(value: Any) -> Any:
    """A bad entry, small enough to echo back."""
    text = json.dumps(value, default=str, ensure_ascii=False)
    return value if len(text) <= 80 else text[:80] + "…"
