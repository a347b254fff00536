"""A deterministic summary built from the history itself.

Used when the summary model fails or is cooling down after a failure.  It
keeps the previous summary, the user's requests, the actions taken with
their outcomes, the files and errors seen and the last thing the assistant
said, and it states plainly that the model did not write it.  Together with
the stored window (whose handle the caller appends) nothing is lost.

It clips, reflows and re-quotes what it takes from the history, so it reads
the window only as :mod:`.egress` masked it, each text whole, and the
previous summary likewise; the assembled text is sealed once more.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

from ..chat.messages import (
    Message,
    call_arguments_text,
    call_id,
    call_name,
    is_real_user_turn,
    message_text,
    role_of,
    tool_calls_of,
    tool_result_id,
)
from ..chat.stubs import argument_gist, outcome_of
from .egress import mask, mask_messages, seal
from .reply import remainder_after_summary

MAX_CHARS = 8000
_PATH = re.compile(r"(?<![\w/.-])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8}\b")
_ERROR = re.compile(r"(?im)^.*\b(error|exception|traceback|failed|fatal)\b.*$")
# "error": null, failed=0, "exception": false, 0 errors, no failures: the absence of an error
_NO_ERROR = re.compile(
    r"""(?i)["']?\b(?:errors?|exceptions?|traceback|failed|failures?|fatal)\b["']?\s*[:=]\s*"""
    r"""(?:null|none|nil|false|0|""|''|\[\]|\{\})(?![\w.])"""
    r"""|\b(?:0|no|zero)\s+(?:errors?|failed|failures?|exceptions?)\b"""
)
_ERROR_KEY = re.compile(r"(?i)^(?:errors?|exception|traceback|failure|fatal|error_message)$")
MAX_JSON_CHARS = 200_000


def _error_lines(text: str) -> Iterator[str]:
    """Lines that report an error, with "no error" phrases (``"error": null``, ``0 failed``) not counted."""
    for line in _ERROR.finditer(text[:20000]):
        if _ERROR.search(_NO_ERROR.sub(" ", line.group(0))):
            yield line.group(0)


def _json_errors(value: Any, key: str = "", depth: int = 0) -> Iterator[str]:
    """Errors in a JSON tool result: non-empty error fields, and error lines inside its strings."""
    if depth > 20:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _json_errors(v, str(k), depth + 1)
    elif isinstance(value, list):
        for item in value[:200]:
            yield from _json_errors(item, key, depth + 1)
    elif isinstance(value, str):
        if _ERROR_KEY.match(key) and value.strip():
            yield f"{key}: {value.strip().splitlines()[0]}"
        else:
            yield from _error_lines(value)
    elif _ERROR_KEY.match(key) and value not in (None, False, 0):
        yield f"{key}: {value}"


def tool_errors(text: str) -> Iterator[str]:
    """What a tool result says went wrong (nothing for ``{"error": null}``)."""
    stripped = text.lstrip()
    if stripped[:1] in ("{", "[") and len(text) <= MAX_JSON_CHARS:
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, (dict, list)):
            yield from _json_errors(data)
            return
    yield from _error_lines(text)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def build_fallback(window: list[Message], *, previous_summary: str | None, reason: str) -> str:
    """A summary body (template sections) assembled without any model."""
    window = mask_messages(window)  # before any clip, reflow or gist below
    outcomes = {tool_result_id(m): outcome_of(message_text(m)) for m in window if role_of(m) == "tool"}
    requests = [_clip(remainder_after_summary(message_text(m)), 300) for m in window if is_real_user_turn(m)]
    actions = []
    files: dict[str, None] = {}
    errors: dict[str, None] = {}
    for message in window:
        text = message_text(message)
        for path in _PATH.findall(text[:20000]):
            files.setdefault(path, None)
        if role_of(message) == "tool":
            for line in tool_errors(text):
                errors.setdefault(_clip(line, 200), None)
        for call in tool_calls_of(message):
            cid = call_id(call)
            actions.append(
                f"- {call_name(call)}({argument_gist(call_arguments_text(call))}) -> "
                f"{outcomes.get(cid, 'no result kept')}"
            )
            for path in _PATH.findall(call_arguments_text(call)):
                files.setdefault(path, None)
    last_words = next(
        (
            _clip(message_text(m), 600)
            for m in reversed(window)
            if role_of(m) == "assistant" and message_text(m).strip()
        ),
        "",
    )

    sections = [
        f"(Built by Stowage without the summary model: {reason}. The full turns are kept in the store.)",
        "## Goal\n" + ("\n".join(f"- {r}" for r in requests[:3]) or "- (see the newest user request)"),
        "## Constraints & Preferences\n- (not extracted automatically; see the user requests)",
        "## Progress\n### Done\n"
        + ("\n".join(actions[-25:]) or "- (no tool actions in the compacted turns)")
        + "\n### In Progress\n"
        + (f"- last assistant message: {last_words}" if last_words else "- unknown")
        + "\n### Blocked\n"
        + ("\n".join(f"- {e}" for e in list(errors)[-8:]) or "- none seen"),
        "## Key Decisions\n- (not extracted automatically)",
        "## Relevant Files\n" + ("\n".join(f"- {f}" for f in list(files)[:30]) or "- none seen"),
        "## Next Steps\n- Continue with the newest user request below.",
        "## Critical Context\n" + ("\n".join(f"- earlier request: {r}" for r in requests[-5:]) or "- none"),
    ]
    if previous_summary:
        sections.insert(1, "## Earlier Summary (carried over)\n" + mask(previous_summary).strip()[:3000])
    text = seal("\n\n".join(sections))
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"
