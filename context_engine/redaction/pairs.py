"""Secret-named name/value pairs in the syntaxes the other rules do not read; :mod:`.rules` runs them last.

One rule reads ``name <sep> value`` in any notation (``OPENAI_KEY=``,
``"openaiKey": "..."``, ``apiKey := "..."``, ``os.environ["X"] = "..."``,
``Ocp-Apim-Subscription-Key: ...``) and lets :mod:`.values` judge the
two strings: a name that says "secret" (``DB_PASS``) masks any value that is
not configuration or code, a name that only hints at one (``OPENAI_KEY``)
masks a random-looking value.  The others read pairs split across a
document: Kubernetes and ECS ``name: DB_PASSWORD`` with the next
``value:``, Dockerfile ``ENV NAME value``, PHP ``define('NAME', 'value')``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from re import Match

from .match import MASK, Haystack, Rule, at_words, in_text, matches_at, occurrences
from .replacements import mask_group, secret_is_quoted
from .values import is_plain_value, looks_random, name_kind

__all__ = ["PAIR_RULES", "at_pair_names", "line_end_after", "line_start_before", "pair_pattern"]

# The secret words a pair's name must hold (lower case), as name_kind reads them.
_NAME_WORDS = (
    "key", "secret", "token", "pass", "pwd", "auth", "cred", "pat", "sig", "sas", "hmac", "dsn", "bearer", "contrase",
)  # fmt: skip
# An unquoted value runs to whitespace or a delimiter of the syntax around it.
# "=" only ends one, as base64 padding: in key=key=key... no value begins (possessive: no backtracking).
_BARE_VALUE = r"[^\s'\"`,;()\[\]{}<>=]"


def pair_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """``name <sep> value`` where the name holds one of ``words`` (any case), in every notation."""
    return re.compile(
        r"(?<![A-Za-z0-9_.\-$@/\\])(?P<name>(?=[A-Za-z_])[A-Za-z0-9_.\-]{0,60}?(?i:"
        + "|".join(words)
        + r")[A-Za-z0-9_.\-ñÑ]{0,40})(?P<nq>['\"]?)\]?[ \t]*(?P<sep>:{1,3}=|\?=|=>|=|:)[ \t]*(?P<q>['\"`])?"
        r"(?P<secret>(?(q)[^'\"`\r\n]{1,4096}+|(?![>])"
        + _BARE_VALUE
        + r"{1,4096}+={0,3}+))(?(q)(?P=q)|(?!"
        + _BARE_VALUE
        + r"|[(\[=]))"
    )


_PAIR = pair_pattern(_NAME_WORDS)


def line_start_before(text: str, at: int) -> bool:
    """Only indentation, list dashes, quotes or an opening brace stand between ``at`` and its line's start."""
    start = text.rfind("\n", 0, at) + 1
    return not text[start:at].strip(" \t-'\"{[,")


def line_end_after(text: str, at: int) -> bool:
    """Only a comment, a comma or a closing bracket follow ``at`` on its line."""
    end = text.find("\n", at)
    rest = text[at : len(text) if end == -1 else end].strip()
    return not rest or rest.startswith(("#", ",", "}", "]"))


def _generated(value: str) -> bool:
    """Unmistakably generated: 20+ characters with 3+ upper-case and lower-case letters and 2+ digits, no spaces.

    A bare ``key`` names cache entries, map keys and GPG key ids as often as
    credentials; their values are hashes (one case: ``Linux-pip-1c1b65...``),
    ids or words.
    """
    if len(value) < 20 or any(c.isspace() for c in value):
        return False
    upper = sum(c.isupper() for c in value)
    lower = sum(c.islower() for c in value)
    return upper >= 3 and lower >= 3 and sum(c.isdigit() for c in value) >= 2 and looks_random(value)


def _pair_kind(name: str, value: str, quoted: bool) -> str | None:
    """:func:`name_kind`, with a bare ``pwd`` a password when its value is a quoted literal and no path.

    Unquoted, ``PWD=/home/x`` is the shell's working directory (every ``env`` dump);
    ``pwd := "s7ViG+9U@I9gX6"`` in code is a password.
    """
    kind = name_kind(name)
    if kind is None and quoted and name.lower() == "pwd" and not value.startswith(("/", "~", ".", "$", "%")):
        return "strong"
    return kind


def _mask_pair(match: Match[str]) -> str:
    name, value = match.group("name"), match.group("secret")
    quoted = secret_is_quoted(match)
    kind = _pair_kind(name, value, quoted)
    if kind is None and name.lower() == "key" and _generated(value):
        return mask_group(match)  # a bare "key:" with a generated value (stripe:\n  key: <...>)
    if kind is None or is_plain_value(value, quoted):
        return match.group(0)
    random = len(value) >= 12 and looks_random(value)
    if not random and (kind == "weak" or (not quoted and name.startswith(("self.", "this.", "cls.")))):
        return match.group(0)  # an attribute set from a variable (self._secret = secret) is code
    if not random and not match.group("q") and match.group("sep") in ("?=", "::=", ":::="):
        if not line_end_after(match.string, match.end()):
            return match.group(0)  # Make: "SECRET_SCAN ?= gitleaks detect --source ." sets a command
    if not random and match.group("sep") == ":" and not match.group("q"):
        # "the secret: keep it short" is prose; a YAML value starts its line's key and ends the line.
        if not line_start_before(match.string, match.start()) or not line_end_after(match.string, match.end()):
            return match.group(0)
    return mask_group(match)


_LAST_OUTSIDE_NAME = re.compile(r"(?s).*[^A-Za-z0-9_.\-]")
_NAME_RUN = re.compile(r"[A-Za-z0-9_.\-ñÑ]*")  # ñ: contraseña
# What must follow a name for a pair: a closing quote or "]", then a separator.
_SEPARATOR_NEXT = re.compile(r"['\"]?\]?[ \t]*[?:=]")


def at_pair_names(words: tuple[str, ...]) -> Callable[[re.Pattern[str], Haystack], Iterable[Match[str]]]:
    """A finder of :func:`pair_pattern` matches whose name holds one of ``words``."""

    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        return _at_names(words, pattern, haystack)

    return find


def _at_names(words: tuple[str, ...], pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
    """Matches from the start of each name run (``[A-Za-z0-9_.-]``) holding one of ``words``, then a separator.

    Each run is looked at once, from its first such word: most ("path",
    "author", "monkey") are not followed by a separator and drop out with
    one anchored match, before the run's start is looked for.
    """
    text, lowered = haystack.text, haystack.lowered
    if len(text) != len(lowered):
        return pattern.finditer(text)
    starts: list[int] = []
    run_end = -1
    for at in occurrences(lowered, [word for word in words if haystack.lower_has(word)]):
        if at < run_end:
            continue  # a later word of a run already looked at
        run_end = _NAME_RUN.match(text, at).end()  # type: ignore[union-attr]  # a * pattern always matches
        if not _SEPARATOR_NEXT.match(text, run_end):
            continue
        low = max(0, at - 80)
        outside = _LAST_OUTSIDE_NAME.match(text, low, at)  # the text's own letters: "ſ" is not a name's
        if outside or low == 0:
            starts.append(outside.end() if outside else 0)
        # else the run began more than 80 characters before its first secret word: no name reaches it
    return matches_at(pattern, text, starts)


def _has_separator(haystack: Haystack) -> bool:
    return (haystack.has("=") or haystack.has(":")) and any(map(haystack.lower_has, _NAME_WORDS))


# -- pairs split across a document --------------------------------------------------------------

_NAMED_VALUE = re.compile(
    r"(?<![A-Za-z0-9_-])name['\"]?[ \t]*[:=][ \t]*(?P<nq>['\"]?)(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,80})(?P=nq)"
    r"[ \t]*,?[ \t]*(?:\r?\n[ \t]*-?[ \t]*)?['\"]?value['\"]?[ \t]*[:=][ \t]*(?P<q>['\"])?"
    r"(?P<secret>(?(q)[^'\"\r\n]{1,400}|[^\s'\"#,}]{1,400}))"
)


def _mask_named_value(match: Match[str]) -> str:
    """Mask a ``name:``/``value:`` pair's value when the name is a secret's (as _mask_pair judges)."""
    kind = name_kind(match.group("name"))
    value = match.group("secret")
    if kind is None or is_plain_value(value, secret_is_quoted(match)) or (kind == "weak" and not looks_random(value)):
        return match.group(0)
    return mask_group(match)


_DOCKERFILE_ENV = re.compile(
    r"(?m)(?:^|(?<=[\"']))[ \t]*ENV[ \t]+(?P<name>[A-Za-z_][A-Za-z0-9_]*)[ \t]+"
    r"(?P<q>['\"])?(?P<secret>(?(q)[^'\"\r\n]+|[^\s'\"]+))"
)
_PHP_DEFINE = re.compile(
    r"\bdefine\([ \t]*(['\"])(?P<name>[A-Za-z_][A-Za-z0-9_]*)\1[ \t]*,[ \t]*(['\"])(?P<secret>[^'\"\r\n]+)\3"
)


def _at_env_lines(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
    """Matches from the start of each line (or the quote) before an ``ENV`` that only indentation precedes."""
    text = haystack.text
    starts = []
    for at in occurrences(text, ("ENV",)):
        before = at
        while before > 0 and text[before - 1] in " \t":
            before -= 1
        if before == 0 or text[before - 1] in "\n\"'":
            starts.append(before)
    return matches_at(pattern, text, starts)


# -- secrets in C, C++, Java and Go code ---------------------------------------------------------

# A declaration the pair rule does not read: an array (char passwd[25] = "..."), a constructor
# (std::string password("...")).  A call (check_password("...")) is no declaration: a type comes first.
_CODE_DECLARATION = re.compile(
    r"(?<![A-Za-z0-9_$])(?:(?:std::)?w?string|String|QString|CString|auto|var|const[ \t]+char[ \t]*\*|char[ \t]*\*?)"
    r"[ \t]+(?P<name>[A-Za-z_][A-Za-z0-9_ñÑ]{0,80})(?:\[[0-9]{0,6}\])?[ \t]*(?:=[ \t]*|\([ \t]*)(?P<q>[\"'`])"
    r"(?P<secret>[^\"'`\r\n]{1,4096})(?P=q)"
)
# A comparison with a literal, either way round: if ("..." == password), if (secret != "...").
_CODE_COMPARISON = re.compile(
    r"(?P<q>[\"'])(?P<secret>[^\"'\r\n]{1,4096})(?P=q)[ \t]*[!=]==?[ \t]*(?P<name>[A-Za-z_][A-Za-z0-9_.]{0,80})"
    r"|(?<![A-Za-z0-9_.$])(?P<name2>[A-Za-z_][A-Za-z0-9_.]{0,80})[ \t]*[!=]==?[ \t]*(?P<q2>[\"'])"
    r"(?P<secret2>[^\"'\r\n]{1,4096})(?P=q2)"
)


def _mask_declared(match: Match[str]) -> str:
    """Mask a declared literal as a pair's value is masked (a strong name, or a weak one and a random value)."""
    value = match.group("secret")
    kind = _pair_kind(match.group("name"), value, quoted=True)
    if kind is None or is_plain_value(value, True) or (kind == "weak" and not looks_random(value)):
        return match.group(0)
    return mask_group(match)


def _mask_compared(match: Match[str]) -> str:
    """Mask a literal compared with a secret's name when it looks generated (``token == 'COLLATE'`` stays)."""
    group = "secret" if match.group("secret") is not None else "secret2"
    name, value = match.group("name") or match.group("name2"), match.group(group)
    if _pair_kind(name.rsplit(".", 1)[-1], value, quoted=True) is None or not looks_random(value):
        return match.group(0)
    start, end = match.span(group)
    base = match.start()
    return match.group(0)[: start - base] + MASK + match.group(0)[end - base :]


_DECLARATION_TYPES = ("string", "wstring", "String", "auto", "var", "char")


def _at_comparisons(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
    """Matches from the opening quote or the name before each ``==`` / ``!=``."""
    text = haystack.text
    starts = []
    for at in occurrences(text, ("==", "!=")):
        before = at
        while before > 0 and text[before - 1] in " \t":
            before -= 1
        if before and text[before - 1] in "\"'":
            line_start = text.rfind("\n", 0, before) + 1
            opening = max(text.rfind('"', line_start, before - 1), text.rfind("'", line_start, before - 1))
            if opening >= 0:
                starts.append(opening)
        else:
            name_start = before
            while (
                name_start > 0
                and (text[name_start - 1].isalnum() or text[name_start - 1] in "_.")
                and text[name_start - 1].isascii()
            ):
                name_start -= 1
            if name_start < before:
                starts.append(name_start)
    starts.sort()
    return matches_at(pattern, text, starts)


PAIR_RULES: tuple[Rule, ...] = (
    Rule(
        _CODE_DECLARATION,
        _mask_declared,
        in_text(any_of=('"', "'", "`")),
        at_words(*_DECLARATION_TYPES, "QString", "CString", "const"),
    ),
    Rule(_CODE_COMPARISON, _mask_compared, in_text(any_of=("==", "!=")), _at_comparisons),
    Rule(_NAMED_VALUE, _mask_named_value, in_text("name", "value"), at_words("name")),
    Rule(_DOCKERFILE_ENV, _mask_named_value, in_text("ENV"), _at_env_lines),
    Rule(_PHP_DEFINE, _mask_named_value, in_text("define("), at_words("define(")),
    Rule(_PAIR, _mask_pair, _has_separator, at_pair_names(_NAME_WORDS)),
)
