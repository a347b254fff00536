"""Secret patterns of key files, config files and command-line flags; :mod:`.rules` runs them last.

PuTTY private keys, ``.pgpass`` lines, .NET ``<add key=... value=...>``
settings, macOS property lists and ``--token <value>`` style flags.  Each
masks only the secret and, like every rule, stays linear in the text (see
``tests/reliability/test_redact_hostile.py``).
"""

from __future__ import annotations

import base64
import binascii
import re
from re import Match

from .match import MASK, Rule, at_lowered_words, at_words, before_mark, fold_case, in_lowered, in_runs, in_text, runs_of
from .replacements import mask_all, mask_group, mask_if_random, secret_is_quoted
from .values import is_plain_value

__all__ = ["FORMAT_RULES", "mask_flag_value"]

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
    r"(?i)(?<![\w-])--(?:[a-z0-9]+[_-])*(?:token|api[_-]?key|apikey|secret|password|passwd|passphrase|pass|pwd|(?:access|secret|app)[_-]key)"
    r"(?:[ \t]+|=)(['\"])?(?P<secret>(?(1)[^'\"\r\n]+|[^\s'\"<>|&;$`(){}-][^\s'\"]*))(?(1)\1)"
)


def mask_flag_value(match: Match[str]) -> str:
    """Mask a flag's value, unless it reads as prose ("pass --token to the CLI") or names a file."""
    value = match.group("secret")
    if value == MASK or value.startswith(("/", "~", "./", "../")) or is_plain_value(value, secret_is_quoted(match)):
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


# "-----BEGIN" in base64 (a Kubernetes Secret's tls.key, kubeconfig data, an env variable), with the lines
# that follow when the encoder wrapped it.
_BASE64_PEM = re.compile(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]*={0,2}(?:\r?\n[ \t]*[A-Za-z0-9+/]+={0,2})*")


def _mask_base64_private_key(match: Match[str]) -> str:
    """Mask base64 that decodes to a PEM private key (a certificate stays), with its wrapped lines."""
    lines = match.group(0).split("\n")
    first = lines[0].rstrip("\r")
    head = first[: len(first) // 4 * 4][:120]
    try:
        decoded = base64.b64decode(head + "=" * (-len(head) % 4), validate=False)
    except (binascii.Error, ValueError):
        return match.group(0)
    if b"PRIVATE KEY" not in decoded.split(b"\n", 1)[0]:
        return match.group(0)
    width, kept = len(first), 1
    while kept < len(lines) and len(lines[kept - 1].strip()) == width and lines[kept].strip():
        kept += 1  # the previous line was full: this one continues the encoding
    return "\n".join([MASK] + lines[kept:]) if kept < len(lines) else MASK


# Discord bot tokens: base64 of the bot's id (it starts M, N or O), a timestamp, an HMAC.
_DISCORD_BOT = re.compile(
    r"(?<![A-Za-z0-9_.\-])[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_.\-])"
)
_DISCORD_RUNS = runs_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-", 59)


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
        re.compile(r"(?i)<add\s+key\s*=\s*(['\"])" + _SECRET_NAME + r"\1\s*value\s*=\s*(['\"])(?P<secret>[^'\"]+)\2"),
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
    # A PEM private key in base64, and the Discord, Azure AD, OpenShift, Google refresh, Braintree and MaxMind
    # tokens, whose characters or shapes the vendor-prefix rule's runs cannot hold.
    Rule(_BASE64_PEM, _mask_base64_private_key, in_text("LS0tLS1CRUdJTi"), at_words("LS0tLS1CRUdJTi")),
    Rule(_DISCORD_BOT, mask_if_random, in_text("."), in_runs(_DISCORD_RUNS, ("M", "N", "O"), "")),
    Rule(
        re.compile(r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.\-]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])"),
        mask_all,
        in_text("Q~"),
        before_mark("Q~", (4,)),
    ),
    Rule(re.compile(r"(?<![A-Za-z0-9_])sha256~[A-Za-z0-9_-]{43}"), mask_all, in_text("sha256~"), at_words("sha256~")),
    Rule(re.compile(r"(?<![A-Za-z0-9_/])1//0[A-Za-z0-9_-]{40,}"), mask_all, in_text("1//0"), at_words("1//0")),
    Rule(
        re.compile(r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}"),
        mask_all,
        in_text("access_token$"),
        at_words("access_token$"),
    ),
    Rule(
        re.compile(r"(?<![A-Za-z0-9_])[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk(?![A-Za-z0-9_])"),
        mask_all,
        in_text("_mmk"),
        before_mark("_mmk", (36,)),
    ),
    # Freemius secret keys in a PHP array ("secret_key" => 'sk_<29>'), whatever quotes close them.
    Rule(
        re.compile(r"(?i)[\"']secret_key[\"'][ \t]*=>[ \t]*[\"'](?P<secret>sk_\S{29})[\"']"),
        mask_group,
        in_text("=>", "sk_"),
        at_lowered_words('"secret_key', "'secret_key"),
    ),
    # openssl's -pass / -passin / -passout pass:<password>.
    Rule(
        re.compile(r"(?<![\w-])-pass(?:in|out)?[ \t]+pass:(?P<secret>[^\s'\"]+)"),
        mask_group,
        in_text("pass:"),
        at_words("-pass"),
    ),
    # Command-line flags: --token <value>, --api-key=<value>, --client-secret '<value>'.
    Rule(
        re.compile(_SECRET_FLAG),
        mask_flag_value,
        in_lowered("token", "key", "secret", "pass", "pwd", text_requires=("--",)),
        at_words("--"),
    ),
)
