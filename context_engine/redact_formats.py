"""Secret patterns of key files, config files and command-line flags; :mod:`.redact_rules` runs them last.

PuTTY private keys, ``.pgpass`` lines, .NET ``<add key=... value=...>``
settings, macOS property lists and ``--token <value>`` style flags.  Each
masks only the secret and, like every rule, stays linear in the text (see
``tests/reliability/test_redact_hostile.py``).
"""

from __future__ import annotations

import re
from re import Match

from .redact_match import MASK, Rule, at_lowered_words, at_words, fold_case, in_lowered, in_text, mask_group

__all__ = ["FORMAT_RULES"]

# The secret words a key ends with (as in redact_rules._SECRET_WORD, with its optional suffixes).
_SECRET_NAME = (
    r"[A-Za-z0-9_.:\-]*(?:api[_.\-]?key|apikey|access[_.\-]?key|secret|token|passw(?:or)?d|passwd|credential"
    r"|auth[_.\-]?token|private[_.\-]?key|client[_.\-]?secret)(?:[_.\-]?(?:access[_.\-]?key|key|value|string))?"
)
_SECRET_PARTS = ("key", "secret", "token", "passw", "credential")

# A line break as text shows it: a real one, or the "\n" escape of a JSON string.
_LINE_BREAK = r"(?:\r?\n|\\r\\n|\\n)"
# One base64 line of a PuTTY key: the whole line, so "Private-MAC: ..." after the block is not taken for one.
_BASE64_LINE = r"[A-Za-z0-9+/=]+(?=[\s\\'\"]|\Z)"

# Flags naming a secret (--token, --api-key, --client-secret, --db-password); the name must end there,
# so --token-file, --max-tokens and --password-stdin are other flags.
_SECRET_FLAG = (
    r"(?i)(?<![\w-])--(?:[a-z0-9]+[_-])*(?:token|api[_-]?key|apikey|secret|password|passwd|(?:access|secret)[_-]key)"
    r"(?:[ \t]+|=)(['\"])?(?P<secret>(?(1)[^'\"\r\n]+|[^\s'\"<>|&;$`(){}-][^\s'\"]*))(?(1)\1)"
)


def _mask_flag_value(match: Match[str]) -> str:
    """Mask a flag's value, unless it reads as prose ("pass --token to the CLI") or names a file."""
    value = match.group("secret")
    if value == MASK or value.startswith(("/", "~", "./", "../")):
        return match.group(0)
    if value.isascii() and value.isalpha() and value.islower() and len(value) < 16:
        return match.group(0)
    return mask_group(match)


_last_text: tuple[str, bool] = ("", False)  # the text last asked about, and whether it names .pgpass


def _mask_pgpass_line(match: Match[str]) -> str:
    """Mask the password of a five-field line when its text names ``pgpass`` (the rule's gate, as a condition)."""
    global _last_text
    text, last = match.string, _last_text  # a local copy: another thread may replace the global meanwhile
    if text is not last[0]:  # one lookup per text, not per line: a long file stays linear
        last = _last_text = (text, "pgpass" in fold_case(text))
    return mask_group(match) if last[1] else match.group(0)


FORMAT_RULES: tuple[Rule, ...] = (
    # PuTTY .ppk files (PuTTY-User-Key-File-2/3): the base64 lines after "Private-Lines: N" are the key.
    Rule(
        re.compile(
            r"Private-Lines:[ \t]*\d+[ \t]*"
            + _LINE_BREAK
            + r"(?P<secret>"
            + _BASE64_LINE
            + r"(?:"
            + _LINE_BREAK
            + _BASE64_LINE
            + r")*)"
        ),
        mask_group,
        in_text("Private-Lines:"),
        at_words("Private-Lines:"),
    ),
    # ~/.pgpass lines, host:port:database:user:password, in a text that names the file; elsewhere five
    # colon-separated fields are ordinary text.
    Rule(
        re.compile(
            r"(?<![^\s'\"])[^\s:'\"]+:(?:[0-9]{1,5}|\*):[^\s:'\"]+:[^\s:'\"]+:"
            r"(?P<secret>[^\s'\"](?:[^\r\n'\"]*[^\s'\"])?)"
        ),
        _mask_pgpass_line,
        in_lowered("pgpass"),
    ),
    # .NET app.config / web.config settings: <add key="SmtpPassword" value="..."/>.
    Rule(
        re.compile(r"(?i)<add\s+key\s*=\s*(['\"])" + _SECRET_NAME + r"\1\s+value\s*=\s*(['\"])(?P<secret>[^'\"]+)\2"),
        mask_group,
        in_lowered("<add"),
        at_lowered_words("<add"),
    ),
    # macOS property lists: <key>password</key> <string>...</string>.
    Rule(
        re.compile(
            r"(?i)<key>\s*" + _SECRET_NAME + r"\s*</key>\s*<string>\s*(?P<secret>[^<\s](?:[^<]*[^<\s])?)\s*</string>"
        ),
        mask_group,
        in_lowered(*_SECRET_PARTS, text_requires=("<string>",)),
        at_lowered_words("<key>"),
    ),
    # Command-line flags: --token <value>, --api-key=<value>, --client-secret '<value>'.
    Rule(
        re.compile(_SECRET_FLAG),
        _mask_flag_value,
        in_lowered("token", "key", "secret", "passw", text_requires=("--",)),
        at_words("--"),
    ),
)
