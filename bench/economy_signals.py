"""Why a needed-while-hidden output was hidden, and which signal of the history would have kept it.

For every case ``replay/offline/hidden.py`` records (the output, the request
whose answer needed it, how the request hid it), :class:`SessionIndex` reads
the chained session's messages and says which signals held before the use
(calls only, never the disk: what a pure view could see):

* ``edited``: the file the output read is edited later (by the using message or before it);
* ``named``: a later call names that file (a search in it, a read of another part, a run of it);
* ``quoted``: an earlier assistant message used the output's distinctive tokens;
* ``newest read``: it is still the newest read of its path;
* ``newest rerun``: it is the newest run of a command run more than once.

A case may hold several; the first in that order is its *primary* signal
(``none``: none held).  ``superseded_by`` names a newer read of the same
path or a newer run of the same command before the use.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping, Sequence

from stowage.context_engine.view.edit_pins import edited_paths, named_paths, read_path_of
from stowage.context_engine.view.quotes import FirstSeen, assistant_text
from stowage.context_engine.view.stub_digest import output_kind

SIGNALS = ("edited", "named", "quoted", "newest read", "newest rerun")
HOWS = ("stubbed", "collapsed", "compacted")


def _calls(message: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(id, name, arguments) of an assistant message's tool calls."""
    found = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping):
            raw = function.get("arguments")
            found.append(
                (str(call.get("id") or ""), str(function.get("name") or ""), raw if isinstance(raw, str) else "")
            )
    return found


def _command_key(name: str, arguments: str) -> str:
    """The call as a repeatable command: its arguments with whitespace runs as one space."""
    return name + "\x00" + " ".join(arguments.split())


class SessionIndex:
    """What the classification needs of one chained session's messages, by position."""

    def __init__(self, messages: Sequence[Mapping[str, Any]], starts: Sequence[int], common: frozenset[str]) -> None:
        self.assistants: list[int] = []  # message index of the k-th assistant message
        self.output_at: dict[str, int] = {}  # call id -> index of its output
        self.call_of: dict[str, tuple[str, str]] = {}  # call id -> (name, arguments)
        self.quotes: dict[str, list[int]] = {}  # call id -> assistant message indices that used its tokens
        self.messages = messages
        first = FirstSeen()
        starting = frozenset(starts)
        for index, message in enumerate(messages):
            if index in starting:
                first = FirstSeen()
            role = message.get("role")
            if role == "tool":
                call_id = str(message.get("tool_call_id") or "")
                content = message.get("content")
                text = content.strip() if isinstance(content, str) else ""
                if call_id and call_id not in self.output_at:
                    self.output_at[call_id] = index
                    first.add_output(call_id, text)
            elif role == "assistant":
                self.assistants.append(index)
                words = assistant_text(message)
                for key, used in first.uses(words).items():
                    if used - common:
                        self.quotes.setdefault(key, []).append(index)
                first.add_other(words)
                for call_id, name, arguments in _calls(message):
                    self.call_of[call_id] = (name, arguments)
            else:
                content = message.get("content")
                first.add_other(content if isinstance(content, str) else "")

    def classify(self, case: Mapping[str, Any]) -> dict[str, Any]:
        call_id = str(case["call_id"])
        request = int(case["request"])
        at = self.output_at.get(call_id, -1)
        use = self.assistants[request] if request < len(self.assistants) else len(self.messages)
        name, arguments = self.call_of.get(call_id, ("", ""))
        content = self.messages[at].get("content") if at >= 0 else ""
        lines = content.splitlines() if isinstance(content, str) else []
        path = read_path_of(name, arguments)
        command = _command_key(name, arguments)
        signals: dict[str, bool] = dict.fromkeys(SIGNALS, False)
        superseded_by = ""
        earlier_runs = 0
        for index in range(0, at):
            message = self.messages[index]
            if message.get("role") == "assistant":
                earlier_runs += sum(1 for c, n, a in _calls(message) if c != call_id and _command_key(n, a) == command)
        newer_read = newer_run = False
        for index in range(at + 1, min(use + 1, len(self.messages))):
            message = self.messages[index]
            if message.get("role") != "assistant":
                continue
            for _, other_name, other_arguments in _calls(message):
                if path is not None:
                    if _same_path(path, edited_paths(other_name, other_arguments)):
                        signals["edited"] = True
                    if index < use and _same_path(path, named_paths(other_name, other_arguments)):
                        signals["named"] = True
                    if index < use and read_path_of(other_name, other_arguments) == path:
                        newer_read = True
                        superseded_by = superseded_by or "a newer read of the same path"
                if index < use and _command_key(other_name, other_arguments) == command:
                    newer_run = True
                    superseded_by = superseded_by or "a newer run of the same command"
        signals["quoted"] = any(at < q < use for q in self.quotes.get(call_id, ()))
        signals["newest read"] = path is not None and not newer_read
        signals["newest rerun"] = earlier_runs > 0 and not newer_run
        primary = next((s for s in SIGNALS if signals[s]), "none")
        quotes_before = [q for q in self.quotes.get(call_id, ()) if at < q < use]
        return {
            **case,
            "kind": output_kind(name, arguments, lines) or "other",
            "path": path,
            "signals": [s for s in SIGNALS if signals[s]],
            "primary": primary,
            "superseded_by": superseded_by,
            "assistant_turns_since_output": sum(1 for a in self.assistants if at < a < use),
            "assistant_turns_since_last_quote": (
                sum(1 for a in self.assistants if quotes_before[-1] < a < use) if quotes_before else None
            ),
        }


def _same_path(path: str, paths: frozenset[str]) -> bool:
    return any(p == path or p.endswith("/" + path) or path.endswith("/" + p) for p in paths)


def table(cases: Sequence[Mapping[str, Any]]) -> list[str]:
    """Markdown rows: how it was hidden x primary signal, with the any-signal counts and kinds below."""
    primaries = [*SIGNALS, "none"]
    counts = Counter((c["where"], c["primary"]) for c in cases)
    rows = ["| hidden by | cases | " + " | ".join(primaries) + " |", "|---" * (len(primaries) + 2) + "|"]
    for how in HOWS:
        total = sum(counts[(how, p)] for p in primaries)
        rows.append(f"| {how} | {total} | " + " | ".join(str(counts[(how, p)]) for p in primaries) + " |")
    rows.append(
        f"| all | {len(cases)} | " + " | ".join(str(sum(counts[(h, p)] for h in HOWS)) for p in primaries) + " |"
    )
    rows.append("")
    any_signal = Counter(s for c in cases for s in c["signals"])
    rows.append("any signal (a case may hold several): " + ", ".join(f"{s} {any_signal[s]}" for s in SIGNALS))
    rows.append("superseded before the use: " + str(sum(1 for c in cases if c["superseded_by"])))
    kinds = Counter(c["kind"] for c in cases)
    rows.append("kinds: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    return rows
