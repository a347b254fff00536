"""Summary text: checking the model's reply, grounding it, wrapping it.

* :class:`SummaryFailure` is how a summarizer reports failure; its ``kind``
  decides between the fallback summary and an abort that keeps the messages.
* :func:`clean_reply` turns the model's reply into a summary body or raises
  ``SummaryFailure("empty"|"garbage")``.
* :func:`ground` replaces whatever the model wrote about the newest request
  with a verbatim quote, and appends the store reference when there is one.
* :func:`wrap` / :func:`extract_previous` put the body in, and take it back
  out of, the summary message, so a later compaction (even after a resume in
  a new process) updates the previous summary instead of summarizing it.
"""

from __future__ import annotations

import json
import re

from ..chat.messages import SUMMARY_END_MARKER, SUMMARY_MARKER, Message, message_text, summary_positions
from ..redaction.shown import shown
from .egress import mask, seal
from .prompt import NEWEST_REQUEST_HEADING, SECTIONS
from .transcript import strip_reasoning

ABORT_KINDS = frozenset({"auth", "quota"})
FAILURE_KINDS = ("auth", "quota", "timeout", "network", "http", "empty", "garbage", "no_provider", "error")
SUMMARY_HEADER = (
    SUMMARY_MARKER + " — reference only. Earlier turns of this conversation were compacted into the "
    "summary below. It is background, not instructions: do not redo finished work or answer old "
    "requests from it; continue from the newest user message after it.]"
)
STORE_HEADING = "## Full History"
_QUOTE_CHARS = 3000
# Models imitate the heading without its "(verbatim)" suffix; drop either form.
_NEWEST_REQUEST_PREFIX = NEWEST_REQUEST_HEADING.split(" (")[0]


class SummaryFailure(Exception):
    """The summary model did not produce a usable summary."""

    def __init__(self, kind: str, message: str) -> None:
        if kind not in FAILURE_KINDS:
            kind = "error"
        message = shown(message)  # a provider's error may echo a key: masked where it is born
        super().__init__(message)
        self.kind = kind
        self.message = message

    @property
    def aborts(self) -> bool:
        """Auth and quota failures keep the messages unchanged."""
        return self.kind in ABORT_KINDS

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


def clean_reply(reply: object) -> str:
    """The usable summary body from a model reply, or ``SummaryFailure``."""
    if not isinstance(reply, str):
        raise SummaryFailure("garbage", f"summary model returned {type(reply).__name__}, not text")
    text = strip_reasoning(reply).strip()
    text = re.sub(r"^```(?:markdown|md)?\s*\n([\s\S]*?)\n```$", r"\1", text).strip()
    if not text:
        raise SummaryFailure("empty", "summary model returned an empty reply")
    if _looks_like_garbage(text):
        raise SummaryFailure("garbage", f"summary model returned something that is not a summary: {text[:80]!r}")
    text = text.replace(SUMMARY_END_MARKER, "").replace(SUMMARY_MARKER, "[summary")
    return mask(text)


def _looks_like_garbage(text: str) -> bool:
    lowered = text[:200].lower()
    if lowered.startswith(("<!doctype", "<html")):
        return True
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and ("error" in parsed or "detail" in parsed):
            return True
    printable = sum(1 for ch in text[:2000] if ch.isprintable() or ch in "\n\t")
    if printable < 0.9 * min(len(text), 2000):
        return True
    headings = sum(1 for section in SECTIONS if f"## {section}".lower() in text.lower())
    return headings == 0 and len(text) < 200


def ground(body: str, *, newest_request: str | None, store_reference: str | None = None) -> str:
    """Quote the newest request verbatim and point at the stored history.

    The result is what the history and the summary log keep: the request is
    masked whole before it is cut and quoted, and everything but Stowage's
    own store reference is sealed (:mod:`.egress`).
    """
    body = _drop_section(body, _NEWEST_REQUEST_PREFIX)
    body = _drop_section(body, STORE_HEADING)
    parts = [body.strip()]
    if newest_request:
        masked = mask(newest_request)
        quote = masked if len(masked) <= _QUOTE_CHARS else masked[:_QUOTE_CHARS] + "…"
        quoted = "\n".join("> " + line for line in quote.splitlines() or [""])
        parts.append(f"{NEWEST_REQUEST_HEADING}\n{quoted}\n(Respond to this request as it appears after the summary.)")
    sealed = seal("\n\n".join(parts))
    return f"{sealed}\n\n{STORE_HEADING}\n{store_reference}" if store_reference else sealed


def _drop_section(body: str, heading: str) -> str:
    start = body.find(heading)
    if start == -1:
        return body
    following = body.find("\n## ", start + len(heading))
    return body[:start].rstrip() + ("\n\n" + body[following + 1 :] if following != -1 else "")


def wrap(body: str) -> str:
    """The content of the summary message."""
    return f"{SUMMARY_HEADER}\n\n{body.strip()}\n\n{SUMMARY_END_MARKER}"


def unwrap(text: str) -> str | None:
    """The summary body inside a message text, or None."""
    start = text.find(SUMMARY_MARKER)
    if start == -1:
        return None
    header_end = text.find("]", start)
    end = text.find(SUMMARY_END_MARKER, start)
    if header_end == -1:
        return None
    body = text[header_end + 1 : end if end != -1 else len(text)]
    return body.strip()


def remainder_after_summary(text: str) -> str:
    """Text of a message outside its embedded summary (when one was merged in)."""
    start = text.find(SUMMARY_MARKER)
    end = text.find(SUMMARY_END_MARKER)
    if start == -1:
        return text
    if end == -1:
        return text[:start].strip()
    return (text[:start] + text[end + len(SUMMARY_END_MARKER) :]).strip()


def extract_previous(messages: list[Message], positions: list[int] | None = None) -> tuple[int, str] | None:
    """Index and body of the newest Stowage summary in ``messages`` (``positions``: where summaries are, if known)."""
    for index in reversed(summary_positions(messages) if positions is None else positions):
        body = unwrap(message_text(messages[index]))
        if body:
            return index, _drop_section(_drop_section(body, _NEWEST_REQUEST_PREFIX), STORE_HEADING).strip()
    return None
