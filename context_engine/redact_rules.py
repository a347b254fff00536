"""The secret patterns :mod:`.redact` applies, in order, each with a cheap way to find it.

Gates, finders and replacements come from :mod:`.redact_match`.
``tests/context_engine/test_redact_equivalence.py`` checks the accelerated
rules against the plain ``pattern.sub`` of every rule, on corpora and on
generated text.  Every pattern stays linear in the text: character classes
bounded by the next delimiter, no nested quantifiers over the same
characters, so a hostile text costs no more than a long one.
"""

from __future__ import annotations

import re
from re import Match

from .redact_match import (MASK, Haystack, Rule, after_digits, always, at_identifier_holding, at_line_key,
                           at_lowered_words, at_words, at_words_before_space, fold_case, in_lowered, in_runs, in_text,
                           key_before, literal_head, mask_all, mask_group, prefiltered, runs_of)

__all__ = ["MASK", "RULES", "Haystack", "Rule", "fold_case", "literal_head"]

_SECRET_QUERY_KEYS = frozenset({
    "access_token", "refresh_token", "id_token", "token", "api_key", "apikey", "key", "client_secret",
    "password", "passwd", "secret", "auth", "jwt", "session", "sig", "signature", "x-amz-signature",
    "x-amz-credential", "x-amz-security-token", "code",
})


def _mask_query(match: Match[str]) -> str:
    key = match.group("key")
    if key.lower() in _SECRET_QUERY_KEYS and match.group("secret"):
        return f"{match.group('sep')}{key}={MASK}"
    return match.group(0)


# -- patterns -------------------------------------------------------------------------------------

_VENDOR_PREFIXES = (
    r"sk-[A-Za-z0-9_-]{10,}", r"sk_(?:live|test)_[A-Za-z0-9]{10,}", r"rk_live_[A-Za-z0-9]{10,}",
    r"sk_[A-Za-z0-9_]{10,}", r"gh[pousr]_[A-Za-z0-9]{10,}", r"github_pat_[A-Za-z0-9_]{10,}",
    r"glpat-[A-Za-z0-9_-]{10,}", r"gl(?:ptt|dt|rt|rtr|cbt|soat|imt|oas|ft|ffct|agent|wt)-[A-Za-z0-9_-]{20,}",
    r"xox[abeprs]-[A-Za-z0-9-]{10,}", r"xapp-[0-9]+-[A-Za-z0-9-]{10,}",
    r"AIza[A-Za-z0-9_-]{30,}", r"ya29\.[A-Za-z0-9_-]{20,}", r"AKIA[A-Z0-9]{16}", r"ASIA[A-Z0-9]{16}",
    r"pplx-[A-Za-z0-9]{10,}", r"fal_[A-Za-z0-9_-]{10,}", r"fc-[A-Za-z0-9]{10,}", r"bb_live_[A-Za-z0-9_-]{10,}",
    r"gAAAA[A-Za-z0-9_=-]{20,}", r"SG\.[A-Za-z0-9_-]{10,}", r"hf_[A-Za-z0-9]{10,}", r"r8_[A-Za-z0-9]{10,}",
    r"npm_[A-Za-z0-9]{10,}", r"pypi-[A-Za-z0-9_-]{10,}", r"do[op]_v1_[A-Za-z0-9]{10,}", r"am_[A-Za-z0-9_-]{10,}",
    r"tvly-[A-Za-z0-9]{10,}", r"exa_[A-Za-z0-9]{10,}", r"gsk_[A-Za-z0-9]{10,}", r"syt_[A-Za-z0-9]{10,}",
    r"retaindb_[A-Za-z0-9]{10,}", r"hsk-[A-Za-z0-9]{10,}", r"mem0_[A-Za-z0-9]{10,}", r"brv_[A-Za-z0-9]{10,}",
    r"xai-[A-Za-z0-9]{30,}", r"ntn_[A-Za-z0-9]{10,}", r"fw[-_][A-Za-z0-9]{30,}", r"fpk_[A-Za-z0-9]{30,}",
    r"shp(?:at|ca|pa|ss)_[A-Fa-f0-9]{20,}", r"dapi[a-f0-9]{32}", r"lin_api_[A-Za-z0-9]{20,}",
    r"sq0(?:atp|csp)-[A-Za-z0-9_-]{20,}", r"AC[a-f0-9]{32}", r"SK[a-f0-9]{32}",
)
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
# Every character a vendor key can hold, and the shortest key (13: "sk-" + 10).
_VENDOR_KEY_RUNS = runs_of(_ALNUM + "_.=-", 13)
_VENDOR_HEADS = tuple(sorted({literal_head(p) for p in _VENDOR_PREFIXES}))

_SECRET_WORD = (r"(?:api[_.\-]?key|apikey|access[_.\-]?key|secret|token|passw(?:or)?d|passwd|credential"
                r"|auth[_.\-]?token|private[_.\-]?key|client[_.\-]?secret)")
_SECRET_WORD_STARTS = ("api", "access", "secret", "token", "passw", "credential", "auth", "private", "client")
_SECRET_WORD_PARTS = ("key", "secret", "token", "passw", "credential")  # one is inside every secret word
# A match of "<secret word><suffix> =" begins at most this far before the "=" and its
# whitespace: "client_secret" (13) + "_access_key" (11).
_SECRET_WORD_REACH = 24
# A key naming a secret: the secret word ends the key (GITHUB_TOKEN, db.password,
# client_secret, aws_secret_access_key) so token_count or password_hint do not match.
_SECRET_KEY = r"[A-Za-z0-9_.\-]*" + _SECRET_WORD + r"(?:[_.\-]?(?:access[_.\-]?key|key|value|string))?"
# Upper-case environment names where the secret word is a whole segment followed
# by more segments (SECRET_KEY_BASE, BASIC_AUTH, API_KEY_PROD), as the built-in
# masks them; counts, limits and locations (TOKEN_COUNT, MAX_TOKENS, PASSWORD_FILE) are not secrets.
_ENV_SECRET_SEGMENT = r"(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH)"
_ENV_SECRET_PARTS = ("API", "TOKEN", "SECRET", "PASSW", "CREDENTIAL", "AUTH")
_ENV_PLAIN_SEGMENT = (r"(?:COUNT|LIMIT|LEN|LENGTH|SIZE|MAX|MIN|HINT|TTL|EXPIRY|EXPIRES|TYPE|NAME|ID|URL|URI|PATH|FILE|DIR"
                      r"|HOST|PORT|ENDPOINT|HEADER|PREFIX|ENABLED|MODE)(?![A-Z0-9])")
_NOT_A_LOOKUP = r"(?!os\.|process\.env|\$ENV)"
_JSON_KEY_PARTS = _SECRET_WORD_PARTS + ("bearer", "authorization")

# Every way the Azure and AWS-secret patterns can begin (lower case): their finders start only there.
_AZURE_KEY_HEADS = ("accountkey", "account_key", "account-key", "sharedaccess", "shared_access", "shared-access")
_AWS_SECRET_HEADS = ("awssecret", "aws_secret", "aws-secret", "secretaccess", "secret_access", "secret-access")

# In order: each rule sees the text the previous ones produced.
RULES: tuple[Rule, ...] = (
    Rule(re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\Z)"),
         mask_all, in_text("PRIVATE KEY-----")),
    Rule(re.compile(r"(?<![A-Za-z0-9_])(?:" + "|".join(_VENDOR_PREFIXES) + r")(?![A-Za-z0-9_-])"),
         mask_all, always,
         # The lookbehind allows "." "=" and "-" of a run before a key ("--token-glpat-...", "x=-sk-...").
         in_runs(_VENDOR_KEY_RUNS, _VENDOR_HEADS, ".=-")),
    Rule(re.compile(r"eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_=-]{4,}){0,2}"), mask_all, in_text("eyJ")),
    Rule(re.compile(r"(?i)authorization\s*:\s*(?:[A-Za-z][\w.+-]*\s+)?(?P<secret>[^\s\"',;]+)"),
         mask_group, in_lowered("authorization")),
    Rule(re.compile(r"(?i)\b(?:bearer|basic|token)\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})"),
         # No gate: the finder's own word searches are the gate.
         mask_group, always, at_words_before_space("bearer", "basic", "token")),
    Rule(re.compile(r"(?i)\b(?:x-api-key|x-goog-api-key|api-key|apikey|x-api-token|x-auth-token|x-access-token)"
                    r"\s*:\s*(?P<secret>[^\s\"',;]+)"),
         mask_group, in_lowered("api-key", "-token", "apikey")),
    Rule(re.compile(r"://[^\s:/@]+:(?P<secret>[^\s@/]+)@"), mask_group, in_text("://")),
    Rule(re.compile(r"(?i)(?:https?|wss?|git|ssh|ftps?|sftp)://(?P<secret>[^\s:@/]{8,})@[^\s]"),
         mask_group, in_text("://")),
    Rule(re.compile(r"(?P<sep>[?&;#])(?P<key>[A-Za-z0-9_.\-]+)=(?P<secret>[^&;#\s\"'<>]*)"),
         _mask_query, in_text("="),
         # Only secret keys change: a match runs from its separator to its value, which holds no separator.
         prefiltered(r"[?&;#](?:" + "|".join(sorted(map(re.escape, _SECRET_QUERY_KEYS), key=len, reverse=True)) + ")=")),
    Rule(re.compile(r"(?i)\"(?:" + _SECRET_KEY + r"|bearer|authorization|key_material|secret_input)\"\s*:\s*"
                    r"\"(?P<secret>[^\"]+)\""),
         mask_group, in_lowered(*_JSON_KEY_PARTS, text_requires=('"', ":")),
         # From a key's opening quote to its colon: a match begins only at an opening quote.
         prefiltered(r'"[a-z0-9_.\-]*(?:key|secret|token|passw|credential|bearer|authorization)[a-z0-9_.\-]*"\s*:')),
    Rule(re.compile(r"(?i)" + _SECRET_WORD + r"(?:[_.\-]?(?:access[_.\-]?key|key|value|string))?\s*=\s*(['\"]?)"
                    r"(?P<secret>" + _NOT_A_LOOKUP + r"[^\s'\"&]+)\1"),
         mask_group, in_lowered(*_SECRET_WORD_PARTS, text_requires=("=",)),
         key_before("=", _SECRET_WORD_STARTS, _SECRET_WORD_REACH)),
    Rule(re.compile(r"(?<![A-Za-z0-9_])(?:[A-Z0-9]+_)*" + _ENV_SECRET_SEGMENT + r"(?:_(?!" + _ENV_PLAIN_SEGMENT
                    + r")[A-Z0-9]+)*\s*=\s*(['\"]?)(?P<secret>" + _NOT_A_LOOKUP + r"[^\s'\"&]+)\1"),
         mask_group, in_text("=", any_of=_ENV_SECRET_PARTS), at_identifier_holding(*_ENV_SECRET_PARTS)),
    # YAML-like "key: value" lines: quoted values may hold spaces, unquoted ones run to a " #" comment,
    # and a CRLF line end is a line end.
    Rule(re.compile(r"(?im)^[ \t-]*" + _SECRET_KEY + r"[ \t]*:[ \t]*(['\"])?(?P<secret>(?(1)[^'\"\r\n]+|"
                    r"[^\s'\"#][^\r\n]*?))(?(1)\1)(?:[ \t]+#[^\r\n]*)?[ \t]*\r?$"),
         mask_group, in_text(":"), at_line_key(*_SECRET_WORD_PARTS)),  # the finder searches the parts
    Rule(re.compile(r"(?<=\d{8}):(?P<secret>[A-Za-z0-9_-]{30,})"), mask_group, in_text(":"),
         after_digits(8, ":")),
    # Webhook URLs are their own credential: the path after the fixed part is the secret.
    Rule(re.compile(r"(?:hooks\.slack\.com/(?:services|workflows|triggers)/|discord(?:app)?\.com/api/webhooks/"
                    r"[0-9]+/)(?P<secret>[A-Za-z0-9_/-]+)"),
         mask_group, in_text(any_of=("hooks.slack.com/", "/api/webhooks/")),
         at_words("hooks.slack.com/", "discord.com/api/webhooks/", "discordapp.com/api/webhooks/")),
    # Azure storage and service-bus connection strings (AccountKey=...;).
    Rule(re.compile(r"(?i)(?:account|shared[_-]?access)[_-]?key\s*=\s*(?P<secret>[^\s;'\"&]+)"),
         mask_group, in_lowered(*_AZURE_KEY_HEADS, text_requires=("=",)), at_lowered_words(*_AZURE_KEY_HEADS)),
    # An AWS secret access key (40 base64 characters) a few characters after its name, in any notation
    # (CLI arguments, tables, colons); "=" and JSON forms are masked by the rules above.
    Rule(re.compile(r"(?i)(?:aws[_-]?secret[_-]?(?:access[_-]?)?key|secret[_-]?access[_-]?key)"
                    r"[^A-Za-z0-9/+\n]{1,12}(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
         mask_group, in_lowered(*_AWS_SECRET_HEADS), at_lowered_words(*_AWS_SECRET_HEADS)),
    # Passwords given on a command line: mysql-family -p<password>, docker login -p <password>,
    # --password <password>, and .netrc "password <password>" after a machine entry.
    Rule(re.compile(r"\b(?:mysql[a-z]*|mariadb[a-z-]*)\b[^\n]*?[ \t]-p(['\"]?)(?P<secret>[^\s'\"]+)\1"),
         mask_group, in_text("-p", any_of=("mysql", "mariadb")), at_words("mysql", "mariadb")),
    Rule(re.compile(r"\bdocker[ \t]+login\b[^\n]*?[ \t]-p[ \t]+(['\"]?)(?P<secret>[^\s'\"]+)\1"),
         mask_group, in_text("login", "-p"), at_words("docker")),
    Rule(re.compile(r"(?<![\w-])--password[ \t]+(['\"]?)(?P<secret>[^\s'\"-][^\s'\"]*)\1"),
         mask_group, in_text("--password"), at_words("--password")),
    Rule(re.compile(r"\bmachine[ \t]+\S+(?:[ \t]+(?:login|account)[ \t]+\S+)*[ \t]+password[ \t]+(?P<secret>\S+)"),
         mask_group, in_text("machine", "password"), at_words("machine")),
)
