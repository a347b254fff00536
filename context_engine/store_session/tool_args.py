"""The two tools' arguments as the model sends them: checked, bounded, and refused with a reason.

``stowage_fetch`` (``fetch_tools``) and ``stowage_grep`` (``history_grep``)
read their numbers and patterns here, so both refuse the same way
(:class:`ToolError` becomes the reply's ``error``) and share their limits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ...blobstore.errors import describe_input
from ...blobstore.retrieval.safe_regex import compile_user_pattern

MAX_NUMBER = 1 << 53  # larger numbers are clamped: no blob has that many lines or characters


@dataclass(frozen=True)
class FetchLimits:
    fetch_max_chars: int = 8000
    full_fetch_max_chars: int = 50_000
    grep_time_budget_s: float = 2.0


class ToolError(Exception):
    """A bad request from the model; becomes ``{"error": ...}``."""


def pattern_arg(args: dict[str, Any]) -> Any:
    pattern = args.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise ToolError("pattern is required (a regular expression, or plain text with literal=true)")
    return compile_user_pattern(pattern, ignore_case=bool(args.get("ignore_case")), literal=bool(args.get("literal")))


def int_arg(args: dict[str, Any], key: str, default: int, *, minimum: int) -> int:
    """A whole number from the model: finite, at least ``minimum``, clamped to ``MAX_NUMBER``."""
    value = args.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ToolError(f"{key} must be a whole number, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ToolError(f"{key} must be a finite whole number, got {value!r}")
    if isinstance(value, str) and len(value.strip()) > 30:
        raise ToolError(f"{key} must be a whole number, got {describe_input(value)}")
    try:
        number = int(value)
    except (ValueError, OverflowError):
        raise ToolError(f"{key} must be a whole number, got {describe_input(value)}") from None
    if number < minimum:
        raise ToolError(f"{key} must be at least {minimum}, got {describe_input(number)}")
    return min(number, MAX_NUMBER)
