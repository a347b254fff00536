"""How a matched secret is masked: the replacements the redaction rules name.

A rule (:class:`.match.Rule`) pairs a pattern with one of these; most mask
only the ``secret`` group and keep the key, header or URL around it, and
some first ask whether the value reads as configuration or code
(:mod:`.values`) and keep it then.
"""

from __future__ import annotations

from re import Match

from .match import MASK
from .values import is_plain_value, looks_random, name_kind


def mask_group(match: Match[str]) -> str:
    """Mask only the ``secret`` group, keeping the key, header or URL around it."""
    text = match.group(0)
    base = match.start(0)
    start, end = match.span("secret")
    return text[: start - base] + MASK + text[end - base :]


def mask_all(match: Match[str]) -> str:
    return MASK


def mask_if_random(match: Match[str]) -> str:
    """Mask the whole match when it looks generated (a shape that ordinary words can also take)."""
    return MASK if looks_random(match.group(0)) else match.group(0)


def mask_unless_plain(match: Match[str]) -> str:
    """Mask the ``secret`` group unless it reads as configuration or code (``false``, ``${{ secrets.X }}``)."""
    return match.group(0) if is_plain_value(match.group("secret"), secret_is_quoted(match)) else mask_group(match)


def mask_unless_plain_literal(match: Match[str]) -> str:
    """:func:`mask_unless_plain` for a header's value, a literal however it looks (``tok_abc`` is no variable)."""
    return match.group(0) if is_plain_value(match.group("secret"), quoted=True) else mask_group(match)


def mask_named_unless_plain(match: Match[str]) -> str:
    """:func:`mask_unless_plain` for a ``key: value`` match, keeping also the values of keys that name no secret.

    The key is the match up to its separator (``adminPasswordKey``: where a
    password is kept; ``existingSecret``: a Secret's name); a key that only
    hints at one (``signing_key``) keeps a value that does not look random.
    """
    head = match.string[match.start() : match.start("secret")]
    key = head.rstrip(" \t'\"").rstrip(":=").rstrip(" \t'\"").lstrip(" \t-'\"")
    kind = name_kind(key)
    if kind is None or (kind == "weak" and not looks_random(match.group("secret"))):
        return match.group(0)
    return mask_unless_plain(match)


def secret_is_quoted(match: Match[str]) -> bool:
    """The ``secret`` group opens right after a quote the match holds (a string literal)."""
    start = match.start("secret")
    return start > match.start() and match.string[start - 1] in "'\"`"
