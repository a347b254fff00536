"""The secret patterns :mod:`.redact` applies, in order, each with a cheap way to find it.

Gates, finders and replacements come from :mod:`.match`.
``tests/context_engine/test_redact_equivalence.py`` checks the accelerated
rules against the plain ``pattern.sub`` of every rule, on corpora and on
generated text.  Every pattern stays linear in the text: character classes
bounded by the next delimiter, no nested quantifiers over the same
characters, so a hostile text costs no more than a long one.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable
from re import Match

from .commands import COMMAND_RULES
from .formats import FORMAT_RULES, mask_flag_value
from .match import (
    MASK,
    Haystack,
    Rule,
    after_digits,
    always,
    at_identifier_holding,
    at_line_key,
    at_lowered_words,
    at_name_holding,
    at_words,
    at_words_before_space,
    command_rule,
    fold_case,
    in_lowered,
    in_text,
    key_before,
    literal_head,
    matches_at,
    occurrences,
    prefiltered,
)
from .pairs import PAIR_RULES
from .providers import PROVIDER_RULES
from .replacements import (
    mask_all,
    mask_group,
    mask_named_unless_plain,
    mask_unless_plain,
    mask_unless_plain_literal,
    secret_is_quoted,
)
from .values import is_plain_value, looks_random
from .vendor_keys import VENDOR_KEY_RULES

__all__ = ["MASK", "RULES", "Haystack", "Rule", "fold_case", "literal_head"]

_SECRET_QUERY_KEYS = frozenset(
    {
        "access_token",
        "refresh_token",
        "id_token",
        "token",
        "api_key",
        "apikey",
        "key",
        "client_secret",
        "password",
        "passwd",
        "secret",
        "auth",
        "jwt",
        "session",
        "sig",
        "signature",
        "x-amz-signature",
        "x-amz-credential",
        "x-amz-security-token",
        "x-goog-signature",
        "x-goog-security-token",
        "code",
    }
)


def _mask_query(match: Match[str]) -> str:
    key = match.group("key")
    if key.lower() in _SECRET_QUERY_KEYS and match.group("secret"):
        return f"{match.group('sep')}{key}={MASK}"
    return match.group(0)


def _mask_cookies(match: Match[str]) -> str:
    """Mask every value of a ``Cookie:`` header, and the cookie (not the attributes) of a ``Set-Cookie:``."""
    pairs = match.group("pairs").split(";")
    for i in range(1 if match.group("set") else len(pairs)):
        name, equals, value = pairs[i].partition("=")
        if equals and value.strip():
            pairs[i] = f"{name}={value[: len(value) - len(value.lstrip())]}{MASK}"
    start = match.start("pairs") - match.start()
    return match.group(0)[:start] + ";".join(pairs)


def _mask_basic_pair(match: Match[str]) -> str:
    """Mask a base64 ``user:password`` (a docker ``config.json`` "auth"); other values stay."""
    try:
        decoded = base64.b64decode(match.group("secret"), validate=True)
    except (binascii.Error, ValueError):
        return match.group(0)
    return mask_group(match) if b":" in decoded else match.group(0)


def _mask_connection_password(match: Match[str]) -> str:
    """Mask a connection string's password; a bare ``PWD=`` outside one is the shell's working directory."""
    secret = match.group("secret")
    if is_plain_value(secret, secret_is_quoted(match)):
        return match.group(0)
    if match.group("key").lower() == "pwd" and not secret.startswith("{"):
        text = match.string
        before = match.start() - 1
        while before >= 0 and text[before] in " \t":
            before -= 1
        after = match.end()
        while after < len(text) and text[after] in " \t":
            after += 1
        in_string = (before >= 0 and text[before] == ";") or text.startswith(";", after)
        if not in_string or secret.startswith(("/", "~")):
            return match.group(0)
    return mask_group(match)


def _mask_random_group(match: Match[str]) -> str:
    """Mask the ``secret`` group when it looks generated: "Bearer <token>", not "basic troubleshooting."."""
    return mask_group(match) if looks_random(match.group("secret")) else match.group(0)


# A rule that masks part of a token leaves the rest: the body of an Airtable token is base64 JSON, masked
# decoded before the rules run ("oaaXXXX.v1.[REDACTED].<hex>"), a value holding "eyJ" loses only its tail
# to the JWT rule ("mgezXXXX[REDACTED]").  The run of token characters around a mask goes too when a piece
# of it looks generated ("hooks.slack.com/services/[REDACTED]" or "name=[REDACTED]" keep their words).
_GLUED_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
_GLUED_TO_MASK = re.compile(r"(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*\[REDACTED\][A-Za-z0-9_.-]*")
_GLUED_PIECES = re.compile(r"\.|\[REDACTED\]")


def _mask_glued(match: Match[str]) -> str:
    text = match.group(0)
    if text != MASK and any(len(p) >= 8 and looks_random(p) for p in _GLUED_PIECES.split(text)):
        return MASK
    return text


def _at_glued_runs(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
    """Matches from the start of the token run before each mask (no scan of the whole text)."""
    text = haystack.text
    starts = []
    for at in occurrences(text, (MASK,)):
        start = at
        while start > 0 and text[start - 1] in _GLUED_CHARS:
            start -= 1
        starts.append(start)
    return matches_at(pattern, text, starts)


# -- patterns -------------------------------------------------------------------------------------

_SECRET_WORD = (
    r"(?:api[_.\-]?key|apikey|access[_.\-]?key|secret|token|passw(?:or)?d|passwd|credential"
    r"|auth[_.\-]?token|private[_.\-]?key|client[_.\-]?secret)"
)
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
_ENV_SECRET_SEGMENT = r"(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|PASS|PWD|CREDENTIALS?|AUTH)"
_ENV_SECRET_PARTS = ("API", "TOKEN", "SECRET", "PASS", "PWD", "CREDENTIAL", "AUTH")
_ENV_PLAIN_SEGMENT = (
    r"(?:COUNT|LIMIT|LEN|LENGTH|SIZE|MAX|MIN|HINT|TTL|EXPIRY|EXPIRES|TYPE|NAME|ID|URL|URI|PATH|FILE|DIR"
    r"|HOST|PORT|ENDPOINT|HEADER|PREFIX|ENABLED|MODE|USER|USERNAME|MODEL|BACKENDS?|CLASS|METHODS?|PROVIDER|SCHEME"
    r"|FALLBACKS|HASHERS|VALIDATORS)(?![A-Z0-9])"
)
# a lookup or a call, not a value (a word boundary closes each "env": Hermes 0.22's install scan reads the
# word followed by a bar as a shell environment dump and asks the user to confirm the install)
_NOT_A_LOOKUP = r"(?!os\.|process\.env\b|\$ENV\b|[A-Za-z_][A-Za-z0-9_.]*\()"
# A value that is already a mask, with the ";" of a connection string after it: left alone, so a second
# pass does not take the ";" into the secret (redaction is idempotent).
_NOT_MASKED = r"(?!\[REDACTED\];)(?!\\[\"'])"
_SECRET_WORD_AND_SUFFIX = _SECRET_WORD + r"(?:[_.\-]?(?:access[_.\-]?key|key|value|string))?"
_HEADER_PARTS = ("-token", "-secret", "-passw", "-key", "-signature", "-apikey")
_JSON_KEY_PARTS = _SECRET_WORD_PARTS + ("bearer", "authorization", "cookie")

# Every way the Azure and AWS-secret patterns can begin (lower case): their finders start only there.
_AZURE_KEY_HEADS = ("accountkey", "account_key", "account-key", "sharedaccess", "shared_access", "shared-access")
_AWS_SECRET_HEADS = ("awssecret", "aws_secret", "aws-secret", "secretaccess", "secret_access", "secret-access")

# In order: each rule sees the text the previous ones produced.
RULES: tuple[Rule, ...] = (
    # PEM and OpenSSH private keys, and PGP's "PRIVATE KEY BLOCK".
    Rule(
        re.compile(
            r"-----BEGIN[A-Za-z0-9 _-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
            r"(?:-----END[A-Za-z0-9 _-]{0,100}PRIVATE KEY(?: BLOCK)?-----|\Z)"
        ),
        mask_all,
        in_text("-----BEGIN", "PRIVATE KEY"),
    ),
    # SSH2 (RFC 4716, ssh.com and PuTTY exports) private keys: four dashes and spaces around the marker.
    Rule(
        re.compile(
            r"---- BEGIN SSH2[A-Za-z0-9 _-]{0,40}PRIVATE KEY ----[\s\S]*?"
            r"(?:---- END SSH2[A-Za-z0-9 _-]{0,40}PRIVATE KEY ----|\Z)"
        ),
        mask_all,
        in_text("---- BEGIN SSH2", "PRIVATE KEY"),
    ),
    # Vendor keys by their prefix, with a plain or a base64 body (vendor_keys.py).
    *VENDOR_KEY_RULES,
    Rule(re.compile(r"eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_=-]{4,}){0,2}"), mask_all, in_text("eyJ")),
    Rule(
        re.compile(r"(?i)authorization\s*:\s*(?:[A-Za-z][\w.+-]*\s+)?(?P<secret>[^\s\"',;]+)"),
        mask_unless_plain_literal,
        in_lowered("authorization"),
    ),
    Rule(
        re.compile(r"(?i)\b(?:bearer|basic|token)\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})"),
        # No gate: the finder's own word searches are the gate.
        _mask_random_group,
        always,
        at_words_before_space("bearer", "basic", "token"),
    ),
    Rule(
        re.compile(
            r"(?i)\b(?:x-api-key|x-goog-api-key|api-key|apikey|x-api-token|x-auth-token|x-access-token)"
            r"\s*:(?!=)\s*(?P<secret>[^\s\"',;]+)"
        ),
        mask_unless_plain_literal,
        in_lowered("api-key", "-token", "apikey"),
    ),
    # user:password@ in a URL; the user may be empty (redis://:pw@host) and the password runs to the
    # last "@" before the host, so a password holding a raw "@" is masked whole.
    Rule(re.compile(r"://[^\s:/@]*:(?P<secret>[^\s/?#'\"<>]+)@"), mask_group, in_text("://")),
    Rule(
        re.compile(r"(?i)(?:https?|wss?|git|ssh|ftps?|sftp)://(?P<secret>[^\s:@/]{8,})@[^\s]"),
        mask_group,
        in_text("://"),
    ),
    Rule(
        re.compile(r"(?P<sep>[?&;#])(?P<key>[A-Za-z0-9_.\-]+)=(?P<secret>[^&;#\s\"'<>]*)"),
        _mask_query,
        in_text("="),
        # Only secret keys change: a match runs from its separator to its value, which holds no separator.
        prefiltered(r"[?&;#](?:" + "|".join(sorted(map(re.escape, _SECRET_QUERY_KEYS), key=len, reverse=True)) + ")="),
    ),
    Rule(
        re.compile(
            r"(?i)\"(?:" + _SECRET_KEY + r"|bearer|authorization|key_material|secret_input|(?:set-)?cookie)\"\s*:\s*"
            r"\"(?P<secret>[^\"]+)\""
        ),
        mask_unless_plain,
        in_lowered(*_JSON_KEY_PARTS, text_requires=('"', ":")),
        # From a key's opening quote to its colon: a match begins only at an opening quote.
        prefiltered(
            r'"[a-z0-9_.\-]*(?:key|secret|token|passw|credential|bearer|authorization|cookie)'
            r'[a-z0-9_.\-]*"\s*:'
        ),
    ),
    Rule(
        re.compile(
            r"(?i)" + _SECRET_WORD + r"(?:[_.\-]?(?:access[_.\-]?key|key|value|string))?[ \t]*=(?![>=])[ \t]*(['\"])?"
            r"(?P<secret>" + _NOT_A_LOOKUP + _NOT_MASKED + r"(?(1)[^'\"\r\n&]+|[^\s'\"&]+))(?(1)\1)"
        ),
        mask_unless_plain,
        in_lowered(*_SECRET_WORD_PARTS, text_requires=("=",)),
        key_before("=", _SECRET_WORD_STARTS, _SECRET_WORD_REACH),
    ),
    Rule(
        re.compile(
            # the bare PWD is the shell's working directory (PWD=/home/..., in every `env` dump)
            r"(?<![A-Za-z0-9_])(?!PWD[ \t]*=)(?:[A-Z0-9]+_)*"
            + _ENV_SECRET_SEGMENT
            + r"(?:_(?!"
            + _ENV_PLAIN_SEGMENT
            + r")[A-Z0-9]+)*[ \t]*=[ \t]*(['\"])?(?P<secret>"
            + _NOT_A_LOOKUP
            + _NOT_MASKED
            + r"(?(1)[^'\"\r\n&]+|[^\s'\"&]+))(?(1)\1)"
        ),
        mask_unless_plain,
        in_text("=", any_of=_ENV_SECRET_PARTS),
        at_identifier_holding(*_ENV_SECRET_PARTS),
    ),
    # YAML-like "key: value" lines: quoted values may hold spaces, unquoted ones run to a " #" comment,
    # and a CRLF line end is a line end.
    Rule(
        re.compile(
            r"(?im)^[ \t-]*" + _SECRET_KEY + r"[ \t]*:(?!=)[ \t]*(['\"])?(?P<secret>(?(1)[^'\"\r\n]+|"
            r"[^\s'\"#][^\r\n]*?))(?(1)\1)(?:[ \t]+#[^\r\n]*)?[ \t]*\r?$"
        ),
        mask_named_unless_plain,
        in_text(":"),
        at_line_key(*_SECRET_WORD_PARTS),
    ),  # the finder searches the parts
    Rule(re.compile(r"(?<=\d{8}):(?P<secret>[A-Za-z0-9_-]{30,})"), mask_group, in_text(":"), after_digits(8, ":")),
    # Webhook URLs are their own credential: the path after the fixed part is the secret.
    Rule(
        re.compile(
            r"(?:hooks\.slack\.com/(?:services|workflows|triggers)/|discord(?:app)?\.com/api/webhooks/"
            r"[0-9]+/|webhook\.office\.com/webhookb2/|hooks\.zapier\.com/hooks/catch/|\.tines\.com/webhook/"
            r"|api\.softlayer\.com/soap/v3(?:\.1)?/)"
            r"(?P<secret>[A-Za-z0-9_/@+-]+)"
        ),
        mask_group,
        in_text(
            any_of=("hooks.slack.com/", "/api/webhooks/", "/webhookb2/", "hooks.zapier.com/", ".tines.com/", "/soap/v3")
        ),
        at_words(
            "hooks.slack.com/",
            "discord.com/api/webhooks/",
            "discordapp.com/api/webhooks/",
            "webhook.office.com/",
            "hooks.zapier.com/",
            ".tines.com/",
            "api.softlayer.com/",
        ),
    ),
    # Azure storage and service-bus connection strings (AccountKey=...;).
    Rule(
        re.compile(r"(?i)(?:account|shared[_-]?access)[_-]?key[ \t]*=[ \t]*(?P<secret>[^\s;'\"&]+)"),
        mask_group,
        in_lowered(*_AZURE_KEY_HEADS, text_requires=("=",)),
        at_lowered_words(*_AZURE_KEY_HEADS),
    ),
    # An AWS secret access key (40 base64 characters) a few characters after its name, in any notation
    # (CLI arguments, tables, colons); "=" and JSON forms are masked by the rules above.
    Rule(
        re.compile(
            r"(?i)(?:aws[_-]?secret[_-]?(?:access[_-]?)?key|secret[_-]?access[_-]?key)"
            r"[^A-Za-z0-9/+\n]{1,12}(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        mask_group,
        in_lowered(*_AWS_SECRET_HEADS),
        at_lowered_words(*_AWS_SECRET_HEADS),
    ),
    # Passwords given on a command line: mysql-family -p<password>, docker login -p <password>,
    # --password <password>, and .netrc "password <password>" after a machine entry.
    command_rule(
        r"\b(?:mysql[a-z]*|mariadb[a-z-]*)\b",
        r"[^\n]*?[ \t]-p(['\"]?)(?P<secret>[^\s'\"]+)\1",
        mask_group,
        in_text("-p", any_of=("mysql", "mariadb")),
        "mysql",
        "mariadb",
    ),
    command_rule(
        r"\bdocker[ \t]+login\b",
        r"[^\n]*?[ \t]-p[ \t]+(['\"]?)(?P<secret>[^\s'\"]+)\1",
        mask_group,
        in_text("login", "-p"),
        "docker",
    ),
    # curl -u user:password, sshpass -p, redis-cli -a, ldapsearch and friends -w.
    command_rule(
        r"\bcurl\b",
        r"[^\n]*?[ \t](?:-u|--user)(?:[ \t]+|=)?(['\"]?)[^\s:'\"]+:(?P<secret>[^\s'\"]+)\1",
        mask_unless_plain,
        in_text("curl", "-u", ":"),
        "curl",
    ),
    command_rule(
        r"\bsshpass\b",
        r"[^\n]*?[ \t]-p[ \t]*(['\"]?)(?P<secret>[^\s'\"]+)\1",
        mask_group,
        in_text("sshpass", "-p"),
        "sshpass",
    ),
    command_rule(
        r"\bredis-cli\b",
        r"[^\n]*?[ \t](?:-a|--pass)[ \t]+(['\"]?)(?P<secret>[^\s'\"]+)\1",
        mask_group,
        in_text("redis-cli", any_of=("-a", "--pass")),
        "redis-cli",
    ),
    command_rule(
        r"\bldap[a-z]+\b",
        r"[^\n]*?[ \t]-w[ \t]+(['\"]?)(?P<secret>[^\s'\"]+)\1",
        mask_group,
        in_text("ldap", "-w"),
        "ldap",
    ),
    Rule(
        re.compile(r"(?<![\w-])--password[ \t]+(['\"]?)(?P<secret>[^\s'\"-][^\s'\"]*)\1"),
        mask_flag_value,
        in_text("--password"),
        at_words("--password"),
    ),
    Rule(
        re.compile(
            r"\b(?:machine\s+\S+(?:\s+(?:login|account)\s+\S+)*|default(?:\s+(?:login|account)\s+\S+)+)"
            r"\s+password\s+(?P<secret>\S+)"
        ),
        mask_group,
        in_text("password", any_of=("machine", "default")),
        at_words("machine", "default"),
    ),
    # -- structured formats (issue 23) --
    # Connection strings (ODBC, ADO.NET): Pwd=...; PWD={va;lue}; Password=with spaces; or up to the closing
    # quote of a connectionString="..." attribute.
    Rule(
        re.compile(
            r"(?i)(?<![A-Za-z0-9_$])(?P<key>pwd|passw(?:or)?d)[ \t]*=(?![=>])[ \t]*(?P<secret>"
            + _NOT_A_LOOKUP
            + r"(?:\{(?:[^}\r\n]|\}\})*\}|[^;\s'\"=&](?:[^;\r\n'\"=&]*[^;\s'\"=&])?(?=[ \t]*[;'\"])|[^;\s'\"&]+))"
        ),
        _mask_connection_password,
        in_lowered("pwd", "passw", text_requires=("=",)),
        at_lowered_words("pwd", "passw"),
    ),
    # Header-style names ending in a secret word: X-Vault-Token, Private-Token, X-RapidAPI-Key,
    # Ocp-Apim-Subscription-Key.
    Rule(
        re.compile(
            r"(?i)(?<![A-Za-z0-9_-])(?:x(?:-[A-Za-z0-9]+)*-key|[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*-(?:token|secret"
            r"|password|passwd|signature|apikey))(?![A-Za-z0-9_-])[ \t]*:[ \t]*(?P<secret>[^\s\"',;]+)"
        ),
        mask_unless_plain_literal,
        in_lowered(*_HEADER_PARTS, text_requires=(":",)),
        at_name_holding(*_HEADER_PARTS),
    ),
    # Cookie and Set-Cookie headers: session ids under any cookie name.
    Rule(
        re.compile(r"(?i)(?<![A-Za-z0-9_-])(?P<set>set-)?cookie[ \t]*:[ \t]*(?P<pairs>[^\r\n'\"]+)"),
        _mask_cookies,
        in_lowered("cookie", text_requires=(":", "=")),
        at_lowered_words("set-cookie", "cookie"),
    ),
    # XML elements named for a secret: <password>...</password>, <apiKey>...</apiKey> (maven, .NET, plist-free).
    Rule(
        re.compile(
            r"(?i)<(?P<tag>[A-Za-z0-9_.:\-]*" + _SECRET_WORD_AND_SUFFIX + r")(?:\s[^<>]*)?>\s*"
            r"(?P<secret>[^<\s](?:[^<]*[^<\s])?)\s*</(?P=tag)>"
        ),
        mask_group,
        in_lowered(*_SECRET_WORD_PARTS, text_requires=("</",)),
        prefiltered(r"<[a-z0-9_.:\-]*(?:key|secret|token|passw|credential)"),
    ),
    # A quoted value after a single-quoted or bare secret key: {'password': '...'} (Python), {password: "..."} (JS).
    Rule(
        re.compile(
            r"(?i)(?:'|(?<![A-Za-z0-9_.\-'\"]))" + _SECRET_KEY + r"'?[ \t]*(?::|=>)[ \t]*(?P<q>['\"])"
            r"(?P<secret>[^'\"\r\n]+)(?P=q)"
        ),
        mask_unless_plain,
        in_lowered(*_SECRET_WORD_PARTS, any_text=(":", "=>")),
        prefiltered(r"(?:'|(?<![a-z0-9_.\-'\"]))[a-z0-9_.\-]*(?:key|secret|token|passw|credential)"),
    ),
    # A YAML "key: value" line written by a shell command: echo '  password: x' > .env, printf 'a:\n  token: x\n'.
    Rule(
        re.compile(
            r"(?i)(?:\b(?:echo|printf)(?:[ \t]+-[A-Za-z]+)*[ \t]+\\?(?P<q>['\"])|\\n)[ \t-]*"
            + _SECRET_KEY
            + r"[ \t]*:[ \t]*(?P<secret>[^\s'\"\\{%$<][^\s'\"\\]*)[ \t]*(?=\\?(?P=q)|\\{1,2}n)"
        ),
        mask_group,
        in_lowered(*_SECRET_WORD_PARTS, text_requires=(":",)),
        prefiltered(
            r"(?:\b(?:echo|printf)(?:[ \t]+-[a-z]+)*[ \t]+\\?['\"]|\\n)[ \t\-]*[a-z0-9_.\-]*"
            r"(?:key|secret|token|passw|credential)"
        ),
    ),
    # docker config.json: "auth": "<base64 of user:password>".
    Rule(
        re.compile(r"(?i)\"auth\"\s*:\s*\"(?P<secret>[A-Za-z0-9+/]+={0,2})\""),
        _mask_basic_pair,
        in_lowered('"auth"'),
        at_lowered_words('"auth"'),
    ),
    # kubeconfig client-key-data (a base64 PEM private key) and .npmrc _auth (base64 user:password).
    Rule(
        re.compile(r"(?i)(?<![A-Za-z0-9_-])client-key-data\"?[ \t]*:[ \t]*\"?(?P<secret>[A-Za-z0-9+/=]{8,})"),
        mask_group,
        in_lowered("client-key-data"),
        at_lowered_words("client-key-data"),
    ),
    Rule(
        re.compile(r"(?<![A-Za-z0-9_])_auth[ \t]*=[ \t]*(?P<secret>[^\s'\"]+)"),
        mask_group,
        in_text("_auth", "="),
        at_words("_auth"),
    ),
    # Key and config files and command-line flags (redact_formats.py): PuTTY, .pgpass, .NET, plist, --token.
    *FORMAT_RULES,
    # Passwords given to named commands (sqlcmd -P, mongosh -p, vault login, -storepass) (redact_commands.py).
    *COMMAND_RULES,
    # Name/value pairs in any notation, and split across lines (redact_pairs.py).
    *PAIR_RULES,
    # Keys named only for their provider, and provider shapes without a literal head (redact_providers.py).
    *PROVIDER_RULES,
    # What a partial mask left of a token: the rest glued to the mask or joined to it by dots.
    Rule(_GLUED_TO_MASK, _mask_glued, in_text(MASK), _at_glued_runs),
)
