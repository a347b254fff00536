"""Parsing and checking of agent-supplied handles.

Handles come from model output, so they are hostile input: validation is pure
string work and happens before anything touches the filesystem or the index.
"""

from __future__ import annotations

from .errors import MalformedHandleError, PathLikeHandleError

MIN_HANDLE_LEN = 16
FULL_LEN = 64
_HEX = frozenset("0123456789abcdef")
_PATH_MARKERS = ("/", "\\", "\x00", "..")


def looks_like_path(text: str) -> bool:
    """True for input shaped like a filesystem path rather than a hash prefix."""
    return any(marker in text for marker in _PATH_MARKERS) or text.startswith(("~", "."))


def normalize_handle(raw: object) -> str:
    """Return the lowercase hex prefix named by ``raw`` or raise a ``MalformedHandleError``.

    Surrounding whitespace is ignored (models add it); case is folded because
    hex is case-insensitive.  Length limits: 16 (enough to be unambiguous in
    practice, 64 bits) to 64 (a full SHA-256).
    """
    if not isinstance(raw, str):
        raise MalformedHandleError(raw, "not-text", f"expected text, got {type(raw).__name__}")
    text = raw.strip()
    if not text:
        raise MalformedHandleError(raw, "empty", "it is empty")
    if looks_like_path(text):
        raise PathLikeHandleError(raw)
    lowered = text.lower()
    for pos, ch in enumerate(lowered):
        if ch not in _HEX:
            raise MalformedHandleError(raw, "non-hex", f"character {ch!r} at position {pos} is not hexadecimal")
    if len(lowered) < MIN_HANDLE_LEN:
        raise MalformedHandleError(
            raw, "too-short", f"it has {len(lowered)} characters, at least {MIN_HANDLE_LEN} are needed"
        )
    if len(lowered) > FULL_LEN:
        raise MalformedHandleError(raw, "too-long", f"it has {len(lowered)} characters, a SHA-256 has only {FULL_LEN}")
    return lowered


def require_sha(raw: object) -> str:
    """Validate a full 64-hex SHA-256 (what ``resolve`` returns) for the read APIs."""
    text = normalize_handle(raw)
    if len(text) != FULL_LEN:
        raise MalformedHandleError(raw, "not-full", "read APIs take the full 64-character hash returned by resolve()")
    return text


def prefix_upper_bound(prefix: str) -> str:
    """Exclusive upper bound for a range scan over lowercase-hex keys with ``prefix``."""
    return prefix + "g"  # 'g' sorts after every hex digit


def common_prefix_len(a: str, b: str) -> int:
    """Length of the shared prefix of two strings."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i
