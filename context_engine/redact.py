"""Mask secrets before text leaves the process (summary prompts, stored text).

Each rule finds a secret and replaces only the secret part, keeping the
surrounding key, header or URL so the text stays readable and parseable.
Rules cover vendor key prefixes, bearer/basic authorization headers,
api-key headers, ``KEY=value`` and ``key: value`` assignments with secret
names, JSON fields, private key blocks, passwords in URLs and connection
strings, secret query parameters, JWTs and chat-bot tokens.
"""

from __future__ import annotations

import re
from typing import Callable, Match

MASK = "[REDACTED]"

_VENDOR_PREFIXES = (
    r"sk-[A-Za-z0-9_-]{10,}", r"sk_(?:live|test)_[A-Za-z0-9]{10,}", r"rk_live_[A-Za-z0-9]{10,}",
    r"sk_[A-Za-z0-9_]{10,}", r"gh[pousr]_[A-Za-z0-9]{10,}", r"github_pat_[A-Za-z0-9_]{10,}",
    r"glpat-[A-Za-z0-9_-]{10,}", r"xox[abeprs]-[A-Za-z0-9-]{10,}", r"xapp-\d+-[A-Za-z0-9-]{10,}",
    r"AIza[A-Za-z0-9_-]{30,}", r"ya29\.[A-Za-z0-9_-]{20,}", r"(?:AKIA|ASIA)[A-Z0-9]{16}",
    r"pplx-[A-Za-z0-9]{10,}", r"fal_[A-Za-z0-9_-]{10,}", r"fc-[A-Za-z0-9]{10,}", r"bb_live_[A-Za-z0-9_-]{10,}",
    r"gAAAA[A-Za-z0-9_=-]{20,}", r"SG\.[A-Za-z0-9_-]{10,}", r"hf_[A-Za-z0-9]{10,}", r"r8_[A-Za-z0-9]{10,}",
    r"npm_[A-Za-z0-9]{10,}", r"pypi-[A-Za-z0-9_-]{10,}", r"do[op]_v1_[A-Za-z0-9]{10,}", r"am_[A-Za-z0-9_-]{10,}",
    r"tvly-[A-Za-z0-9]{10,}", r"exa_[A-Za-z0-9]{10,}", r"gsk_[A-Za-z0-9]{10,}", r"syt_[A-Za-z0-9]{10,}",
    r"retaindb_[A-Za-z0-9]{10,}", r"hsk-[A-Za-z0-9]{10,}", r"mem0_[A-Za-z0-9]{10,}", r"brv_[A-Za-z0-9]{10,}",
    r"xai-[A-Za-z0-9]{30,}", r"ntn_[A-Za-z0-9]{10,}", r"fw[-_][A-Za-z0-9]{30,}", r"fpk_[A-Za-z0-9]{30,}",
    r"shp(?:at|ca|pa|ss)_[A-Fa-f0-9]{20,}", r"dapi[a-f0-9]{32}", r"lin_api_[A-Za-z0-9]{20,}",
    r"sq0(?:atp|csp)-[A-Za-z0-9_-]{20,}", r"AC[a-f0-9]{32}", r"SK[a-f0-9]{32}",
)
_SECRET_WORD = r"(?:api[_.\-]?key|apikey|access[_.\-]?key|secret|token|passw(?:or)?d|passwd|credential|auth[_.\-]?token|private[_.\-]?key|client[_.\-]?secret)"
# A key naming a secret: the secret word ends the key (GITHUB_TOKEN, db.password,
# client_secret, aws_secret_access_key) so token_count or password_hint do not match.
_SECRET_KEY = r"[A-Za-z0-9_.\-]*" + _SECRET_WORD + r"(?:[_.\-]?(?:access[_.\-]?key|key|value|string))?"
# Upper-case environment names where the secret word is a whole segment followed
# by more segments (SECRET_KEY_BASE, BASIC_AUTH, API_KEY_PROD), as the built-in
# masks them; counts, limits and locations (TOKEN_COUNT, MAX_TOKENS, PASSWORD_FILE) are not secrets.
_ENV_SECRET_SEGMENT = r"(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH)"
_ENV_PLAIN_SEGMENT = (r"(?:COUNT|LIMIT|LEN|LENGTH|SIZE|MAX|MIN|HINT|TTL|EXPIRY|EXPIRES|TYPE|NAME|ID|URL|URI|PATH|FILE|DIR"
                      r"|HOST|PORT|ENDPOINT|HEADER|PREFIX|ENABLED|MODE)(?![A-Z0-9])")
_MEMO_MAX_TEXT = 4096
_MEMO_ENTRIES = 20_000
_memo: dict[str, str] = {}
# Every vendor key is a run of at least 13 token characters: texts without one
# skip the (expensive) alternation of vendor prefixes.
_LONG_TOKEN = re.compile(r"[A-Za-z0-9_\-.]{13}")
_SECRET_WORDS_PLAIN = ("key", "secret", "token", "passw", "credential")
_SECRET_QUERY_KEYS = frozenset({
    "access_token", "refresh_token", "id_token", "token", "api_key", "apikey", "key", "client_secret",
    "password", "passwd", "secret", "auth", "jwt", "session", "sig", "signature", "x-amz-signature",
    "x-amz-credential", "x-amz-security-token", "code",
})

def _mask_group(match: Match[str]) -> str:
    """Mask only the ``secret`` group, keeping the key, header or URL around it."""
    text = match.group(0)
    base = match.start(0)
    start, end = match.span("secret")
    return text[: start - base] + MASK + text[end - base:]


def _mask_all(match: Match[str]) -> str:
    return MASK


def _mask_query(match: Match[str]) -> str:
    key = match.group("key")
    if key.lower() in _SECRET_QUERY_KEYS and match.group("secret"):
        return f"{match.group('sep')}{key}={MASK}"
    return match.group(0)


# Each rule: (literals of which one must occur in the lowercased text, pattern,
# replacement).  The literal check is a fast substring search that lets most
# rules skip most texts without running their regex.
_RULES: tuple[tuple[tuple, re.Pattern[str], Callable[[Match[str]], str]], ...] = (
    (("private key",), re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\Z)"),
     _mask_all),
    ((_LONG_TOKEN,), re.compile(r"(?<![A-Za-z0-9_-])(?:" + "|".join(_VENDOR_PREFIXES) + r")(?![A-Za-z0-9_-])"), _mask_all),
    (("eyj",), re.compile(r"eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_=-]{4,}){0,2}"), _mask_all),
    (("authorization",), re.compile(r"(?i)authorization\s*:\s*(?:[A-Za-z][\w.+-]*\s+)?(?P<secret>[^\s\"',;]+)"),
     _mask_group),
    (("bearer", "basic", "token "), re.compile(r"(?i)\b(?:bearer|basic|token)\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})"),
     _mask_group),
    (("api-key", "-token", "apikey"), re.compile(
        r"(?i)\b(?:x-api-key|x-goog-api-key|api-key|apikey|x-api-token|x-auth-token|x-access-token)\s*:\s*"
        r"(?P<secret>[^\s\"',;]+)"), _mask_group),
    (("://",), re.compile(r"://[^\s:/@]+:(?P<secret>[^\s@/]+)@"), _mask_group),
    (("://",), re.compile(r"(?i)(?:https?|wss?|git|ssh|ftps?|sftp)://(?P<secret>[^\s:@/]{8,})@[^\s]"), _mask_group),
    (tuple(k + "=" for k in _SECRET_QUERY_KEYS),
     re.compile(r"(?P<sep>[?&;#])(?P<key>[A-Za-z0-9_.\-]+)=(?P<secret>[^&;#\s\"'<>]*)"), _mask_query),
    (('":',), re.compile(r"(?i)\"(?:" + _SECRET_KEY + r"|bearer|authorization|key_material|secret_input)\"\s*:\s*\"(?P<secret>[^\"]+)\""),
     _mask_group),
    (_SECRET_WORDS_PLAIN, re.compile(
        r"(?i)" + _SECRET_WORD + r"(?:[_.\-]?(?:access[_.\-]?key|key|value|string))?\s*=\s*(['\"]?)"
        r"(?P<secret>(?!os\.|process\.env|\$ENV)[^\s'\"&]+)\1"), _mask_group),
    (_SECRET_WORDS_PLAIN + ("auth",), re.compile(
        r"(?<![A-Za-z0-9_])(?:[A-Z0-9]+_)*" + _ENV_SECRET_SEGMENT + r"(?:_(?!" + _ENV_PLAIN_SEGMENT + r")[A-Z0-9]+)*"
        r"\s*=\s*(['\"]?)(?P<secret>(?!os\.|process\.env|\$ENV)[^\s'\"&]+)\1"), _mask_group),
    (_SECRET_WORDS_PLAIN, re.compile(
        r"(?im)^[ \t-]*" + _SECRET_KEY + r"[ \t]*:[ \t]*(['\"]?)(?P<secret>[^\s'\"]+)\1[ \t]*$"), _mask_group),
    ((":",), re.compile(r"(?<=\d{8}):(?P<secret>[A-Za-z0-9_-]{30,})"), _mask_group),
)


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED]``.

    Results for short texts are memoized: compaction redacts the same
    messages again at every pass.
    """
    if not text:
        return text
    if len(text) <= _MEMO_MAX_TEXT:
        cached = _memo.get(text)
        if cached is None:
            cached = _redact(text)
            if len(_memo) >= _MEMO_ENTRIES:
                _memo.clear()
            _memo[text] = cached
        return cached
    return _redact(text)


def _redact(text: str) -> str:
    lowered = text.lower()
    for gates, pattern, replace in _RULES:
        if gates and not _gate_open(gates, text, lowered):
            continue
        redacted = pattern.sub(replace, text)
        if redacted != text:
            text = redacted
            lowered = text.lower()
    return text


def _gate_open(gates: tuple, text: str, lowered: str) -> bool:  # noqa: ANN401
    for gate in gates:
        if isinstance(gate, str):
            if gate in lowered:
                return True
        elif gate.search(text):
            return True
    return False


def contains_secret(text: str) -> bool:
    return redact(text) != text
