"""Is a message list acceptable to a provider?

One function, :func:`validate_messages`, answers for a provider profile and
lists every problem it finds.  The engine uses it as a last check before it
hands a compacted list back to the host, and the tests use it everywhere.

Profiles:

* ``"openai"``: tool pairing (every call answered, every result called,
  results directly after their call), ids unique, arguments a string holding
  a JSON object, tool results with text content, no empty text blocks,
  known roles.
* ``"strict"`` (default): everything above plus what the strictest providers
  (Anthropic, some local servers) demand: system messages only at the start,
  the first non-system message is a user turn, no two user or two assistant
  messages side by side, at least one user turn, no empty user turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .messages import (
    call_arguments_text,
    call_id,
    has_content,
    json_object_problem,
    role_of,
    tool_calls_of,
    tool_result_id,
)

KNOWN_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
PROFILES = ("openai", "strict")


@dataclass(frozen=True)
class Problem:
    """One reason a provider would reject the list."""

    index: int
    code: str
    detail: str

    def __str__(self) -> str:
        return f"message {self.index}: {self.code}: {self.detail}"


def validate_messages(messages: Any, provider: str = "strict") -> list[Problem]:
    """Every problem that would make ``provider`` reject ``messages``."""
    if provider not in PROFILES:
        raise ValueError(f"unknown provider profile {provider!r}; expected one of {PROFILES}")
    if not isinstance(messages, list):
        return [Problem(-1, "not_a_list", f"expected a list of messages, got {type(messages).__name__}")]
    problems: list[Problem] = []
    problems += _check_shapes(messages)
    problems += _check_tool_pairing(messages)
    if provider == "strict":
        problems += _check_roles_strict(messages)
    return problems


def is_valid(messages: Any, provider: str = "strict") -> bool:
    return not validate_messages(messages, provider)


def _check_shapes(messages: list[Any]) -> list[Problem]:
    problems: list[Problem] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            problems.append(Problem(index, "not_a_dict", f"got {type(message).__name__}"))
            continue
        role = role_of(message)
        if role not in KNOWN_ROLES:
            problems.append(Problem(index, "bad_role", f"role {message.get('role')!r}"))
        if role == "assistant":
            problems += _check_arguments(index, message)
        if role == "tool" and not isinstance(message.get("content"), (str, list)):
            problems.append(
                Problem(
                    index,
                    "tool_content_missing",
                    f"tool result content is {type(message.get('content')).__name__}, not text",
                )
            )
        if role in ("user", "assistant", "tool") and _empty_text_block(message.get("content")):
            problems.append(Problem(index, "empty_text_block", "a text content block with no text"))
    return problems


def _empty_text_block(content: Any) -> bool:
    """Strict providers reject text blocks whose text is empty (or not a string)."""
    return isinstance(content, list) and any(
        isinstance(part, dict)
        and part.get("type") == "text"
        and not (isinstance(part.get("text"), str) and part["text"].strip())
        for part in content
    )


def _check_arguments(index: int, message: Mapping[str, Any]) -> list[Problem]:
    problems: list[Problem] = []
    raw_calls = message.get("tool_calls")
    if raw_calls is not None and not isinstance(raw_calls, list):
        return [Problem(index, "bad_tool_calls", "tool_calls is not a list")]
    for call in raw_calls or []:
        if not isinstance(call, dict) or not call_id(call):
            problems.append(Problem(index, "bad_tool_call", "tool call without an id"))
            continue
        fn = call.get("function")
        raw = fn.get("arguments") if isinstance(fn, dict) else call.get("arguments")
        if raw is not None and not isinstance(raw, str):
            problems.append(
                Problem(
                    index,
                    "arguments_not_string",
                    f"call {call_id(call)}: arguments are a {type(raw).__name__}, not a JSON string",
                )
            )
            continue
        problem = json_object_problem(call_arguments_text(call))
        if problem:
            problems.append(Problem(index, "bad_arguments_json", f"call {call_id(call)}: {problem}"))
    return problems


def _check_tool_pairing(messages: list[Any]) -> list[Problem]:
    """Results must follow their assistant directly, one per call, no strays."""
    problems: list[Problem] = []
    seen_ids: set[str] = set()
    open_ids: dict[str, int] = {}  # ids of the current assistant still unanswered
    in_result_run = False
    for index, message in enumerate(messages):
        role = role_of(message)
        if role == "tool":
            cid = tool_result_id(message)
            if not in_result_run or cid not in open_ids:
                problems.append(Problem(index, "orphan_tool_result", f"no preceding call with id {cid!r}"))
            else:
                del open_ids[cid]
            continue
        problems += _unanswered(open_ids)
        open_ids = {}
        in_result_run = False
        if role == "assistant":
            for call in tool_calls_of(message):
                cid = call_id(call)
                if not cid:
                    continue
                if cid in seen_ids:
                    problems.append(Problem(index, "duplicate_call_id", f"id {cid!r} used twice"))
                seen_ids.add(cid)
                open_ids[cid] = index
            in_result_run = bool(open_ids)
    problems += _unanswered(open_ids)
    return problems


def _unanswered(open_ids: dict[str, int]) -> list[Problem]:
    return [Problem(index, "missing_tool_result", f"call {cid!r} has no result") for cid, index in open_ids.items()]


def _check_roles_strict(messages: list[Any]) -> list[Problem]:
    problems: list[Problem] = []
    conversation = [(i, m) for i, m in enumerate(messages) if role_of(m) not in ("system", "developer")]
    for index, message in enumerate(messages):
        if role_of(message) in ("system", "developer") and any(
            role_of(m) not in ("system", "developer") for m in messages[:index]
        ):
            problems.append(Problem(index, "system_not_first", "system message after the conversation started"))
    if not conversation:
        return problems + [Problem(-1, "no_user_turn", "no user or assistant messages")]
    if not any(role_of(m) == "user" for _, m in conversation):
        problems.append(Problem(-1, "no_user_turn", "no user message survives"))
    first_index, first = conversation[0]
    if role_of(first) != "user":
        problems.append(Problem(first_index, "first_not_user", f"conversation starts with {role_of(first)!r}"))
    previous_role = ""
    for index, message in conversation:
        role = role_of(message)
        if role in ("user", "assistant") and role == previous_role:
            problems.append(Problem(index, "same_role_neighbours", f"two {role} messages in a row"))
        if role == "user" and not has_content(message):
            problems.append(Problem(index, "empty_message", "user message without content"))
        if role == "assistant" and not has_content(message) and not tool_calls_of(message):
            problems.append(Problem(index, "empty_message", "assistant message without content or tool calls"))
        previous_role = role
    return problems
