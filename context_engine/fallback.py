"""A deterministic summary built from the history itself.

Used when the summary model fails or is cooling down after a failure.  It
keeps the previous summary, the user's requests, the actions taken with
their outcomes, the files and errors seen and the last thing the assistant
said, and it states plainly that the model did not write it.  Together with
the stored window (whose handle the caller appends) nothing is lost.
"""

from __future__ import annotations

import re

from .messages import (Message, call_arguments_text, call_id, call_name, is_real_user_turn, message_text, role_of,
                       tool_calls_of, tool_result_id)
from .redact import redact
from .stubs import argument_gist, outcome_of
from .summary import remainder_after_summary

MAX_CHARS = 8000
_PATH = re.compile(r"(?<![\w/.-])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8}\b")
_ERROR = re.compile(r"(?im)^.*\b(error|exception|traceback|failed|fatal)\b.*$")


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def build_fallback(window: list[Message], *, previous_summary: str | None, reason: str) -> str:
    """A summary body (template sections) assembled without any model."""
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
            for line in _ERROR.finditer(text[:20000]):
                errors.setdefault(_clip(line.group(0), 200), None)
        for call in tool_calls_of(message):
            cid = call_id(call)
            actions.append(f"- {call_name(call)}({argument_gist(call_arguments_text(call))}) -> "
                           f"{outcomes.get(cid, 'no result kept')}")
            for path in _PATH.findall(call_arguments_text(call)):
                files.setdefault(path, None)
    last_words = next((_clip(message_text(m), 600) for m in reversed(window)
                       if role_of(m) == "assistant" and message_text(m).strip()), "")

    sections = [
        f"(Built by Stowage without the summary model: {reason}. The full turns are kept in the store.)",
        "## Goal\n" + ("\n".join(f"- {r}" for r in requests[:3]) or "- (see the newest user request)"),
        "## Constraints & Preferences\n- (not extracted automatically; see the user requests)",
        "## Progress\n### Done\n" + ("\n".join(actions[-25:]) or "- (no tool actions in the compacted turns)")
        + "\n### In Progress\n" + (f"- last assistant message: {last_words}" if last_words else "- unknown")
        + "\n### Blocked\n" + ("\n".join(f"- {e}" for e in list(errors)[-8:]) or "- none seen"),
        "## Key Decisions\n- (not extracted automatically)",
        "## Relevant Files\n" + ("\n".join(f"- {f}" for f in list(files)[:30]) or "- none seen"),
        "## Next Steps\n- Continue with the newest user request below.",
        "## Critical Context\n" + ("\n".join(f"- earlier request: {r}" for r in requests[-5:]) or "- none"),
    ]
    if previous_summary:
        sections.insert(1, "## Earlier Summary (carried over)\n" + previous_summary.strip()[:3000])
    text = redact("\n\n".join(sections))
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"
