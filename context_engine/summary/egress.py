"""The one gate for text that leaves the process for the summary model or is stored as a summary.

Masking only works on text a rule can read whole: a private key cut between
its BEGIN line and its body, an indented YAML password reflowed onto one
line, a JSON password re-quoted as ``key="value"`` no longer look like
secrets, and the pieces pass.  So every route that builds text for the
summary model (the model summary, summaries prepared ahead, the fallback
summary, the previous-summary section, the replay) goes through two steps
here, and only here:

* :func:`mask` / :func:`mask_messages` on each whole text *before* anything
  cuts, reflows, quotes or gists it (a long tool output the transcript shows
  only as its verdict goes through :func:`verdict`, which masks the whole
  output when the verdict quotes it);
* :func:`seal` on the exact string that is sent (:func:`gated` wraps the
  summary call) or stored (the summary body in the history and summary log).

The masking itself is :mod:`..redaction.redact`'s; this module decides when it runs.
"""

from __future__ import annotations

import re
from typing import Callable

from ..chat.messages import Message, call_arguments_text, content_text, role_of, tool_calls_of, with_call_arguments
from ..chat.stubs import is_stub, outcome_of
from ..redaction.masking import mask, unescaped_masked
from ..redaction.redact import redact_many

_PARAGRAPH = "\n\n"
# verdicts that quote nothing of the output: "ok", "success=false", "exit_code 0"
_PLAIN_VERDICT = re.compile(r"ok|success=false|\w+ -?\d+")

Summarizer = Callable[[str], str]

__all__ = ["gated", "mask", "mask_messages", "seal", "verdict", "verdict_only"]


def mask_messages(messages: list[Message], *, verdict_chars: int | None = None) -> list[Message]:
    """Copies of ``messages`` whose texts and tool-call arguments are masked whole.

    Content parts become one string (their text as :func:`.message_text`
    joins it, so a secret split between parts is seen whole); every other
    field is kept.  All texts are masked in one batch.  The input is not
    mutated.  With ``verdict_chars``, a tool output the transcript shows
    only as its verdict (:func:`verdict_only`) keeps its content unmasked:
    :func:`verdict` is the only way it is shown, and it masks what it quotes.
    """
    texts: list[str] = []
    for message in messages:
        if isinstance(message, dict):
            if _masks_content(message, verdict_chars):
                texts.append(content_text(message.get("content")))
            texts.extend(call_arguments_text(call) for call in tool_calls_of(message))
    masked = iter(redact_many([unescaped_masked(text) for text in texts]))
    out: list[Message] = []
    for message in messages:
        if not isinstance(message, dict):
            out.append(message)
            continue
        copy = dict(message)
        if _masks_content(message, verdict_chars):
            copy["content"] = next(masked)
        calls = tool_calls_of(message)
        if calls:
            copy["tool_calls"] = [with_call_arguments(call, next(masked)) for call in calls]
        out.append(copy)
    return out


def verdict_only(role: str, text: str, verdict_chars: int) -> bool:
    """A tool output shown only as its verdict and size: at least ``verdict_chars`` long and not a stub."""
    return role == "tool" and len(text) >= verdict_chars and not is_stub(text)


def verdict(output: str) -> str:
    """The output's verdict (:func:`..chat.stubs.outcome_of`), safe to send.

    A verdict that quotes the output (an error line, an error field, a
    status word) is read from the whole output masked, so the quote is never
    a cut piece of a secret; "ok" or "exit_code 1" quote nothing, and the
    output is not masked for them (most long outputs, at no cost).
    """
    found = outcome_of(output)
    return found if _PLAIN_VERDICT.fullmatch(found) else outcome_of(mask(output))


def seal(text: str) -> str:
    """The final mask of the exact string sent to the summary model or stored as a summary.

    Paragraph by paragraph (texts between blank lines, in one batch): a rule
    that reads context, such as a ``.pgpass`` line counting as one only in a
    text that names pgpass, must not take it from another message of the
    prompt.  A secret was masked whole by :func:`mask` before; this catches
    whatever a route let through unmasked.
    """
    if not text:
        return text
    return _PARAGRAPH.join(redact_many(text.split(_PARAGRAPH)))


def gated(summarize: Summarizer) -> Summarizer:
    """``summarize`` with every prompt sealed as the last step before it leaves."""

    def send(prompt: str) -> str:
        return summarize(seal(prompt))

    return send


def _masks_content(message: Message, verdict_chars: int | None) -> bool:
    content = message.get("content")
    if content is None:
        return False
    if verdict_chars is None or role_of(message) != "tool":
        return True
    return not verdict_only("tool", content_text(content), verdict_chars)
