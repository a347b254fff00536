"""What a name and a value look like: a secret's, or configuration's and code's that merely sit beside one.

The redaction rules find ``name <separator> value`` pairs; these pure
functions decide from the two strings alone whether the value is a secret.
A secret-named key with ``false``, ``write``, ``${{ secrets.X }}``,
``var.db_password`` or ``tokens[0]`` is configuration or code, and masking it
loses real information (``id-token: write``,
``automountServiceAccountToken: false``); a random-looking value under a
name that only hints at a secret (``OPENAI_KEY``, ``Ocp-Apim-Subscription-Key``)
is one.  Every function looks at its arguments only, so a rule using them
gives the same result on a text alone and inside ``redact_many``'s joined texts.
"""

from __future__ import annotations

import re

__all__ = ["PLAIN_AFTER", "is_plain_value", "looks_random", "name_kind"]

# Values a secret-named key holds in configuration: booleans, nulls, permission levels, states, and the
# name of the secret itself (an ExternalSecret's "secretKey: password").
_PLAIN_WORDS = frozenset(
    {
        "true", "false", "yes", "no", "on", "off", "null", "none", "nil", "undefined", "n/a",
        "read", "write", "read-all", "write-all", "admin", "required", "optional", "expired", "invalid",
        "missing", "empty", "unset", "revoked", "enabled", "disabled", "auto", "default", "inherit", "redacted",
        "value",
        "password", "passwd", "pass", "pwd", "token", "secret", "key", "api_key", "apikey", "api-key",
        "credential", "credentials", "secret_key", "secretkey", "access_token", "private_key",
    }
)  # fmt: skip
# Words that make a several-word value a sentence ("password: must be at least 12 characters").
_PROSE_WORDS = frozenset(
    {"a", "an", "the", "is", "are", "be", "must", "not", "at", "least", "to", "of", "for", "in", "and", "or", "too"}
)
_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+[;,]?")
_EXPRESSION = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*[\[(]")
_SNAKE_NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z][a-z0-9]*)+")
_CONSTANT_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_LOWER_PATH = re.compile(r"(?:\.{1,2}/|~/|/)[a-z0-9_.\-/]*")
# Placeholders of an example file: <...>, "sk-...", "your-api-key-here", "********".
_PLACEHOLDER_START = re.compile(r"(?i)<|(?:your|insert|enter|replace|put)[-_ ]|.*\.\.\.$")
_PLACEHOLDER = re.compile(
    r"\{[A-Za-z_][A-Za-z0-9_.]*(?:\(\))?\}|<[^<>]*>|\.\.\.|\*{3,}.*|.*\*{4,}.*|x{6,}|X{6,}|\[REDACTED\]"
)
# An environment lookup in code: process.env.X, import.meta.env.VITE_X, os.environ.X.  (A word boundary
# closes each "env": Hermes 0.22's install scan reads the word followed by a bar as a shell environment dump
# and flags the plugin HIGH, so `hermes plugins install` stops to ask.)
_ENV_LOOKUP = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*\.)*(?:env\b|environ\b|ENV\b)\.[A-Za-z_][A-Za-z0-9_]*[;,]?")
# An identifier naming a file (systemd's LoadCredential=<id>:<path>): not a URL, whose "//" follows the colon.
_ID_PATH = re.compile(r"[A-Za-z0-9_.@-]+:(?:/(?!/)|~/)[^\s:]*")
# A glob over names (systemd's ImportCredential=api.*, a list of keys "tokens.*").
_NAME_GLOB = re.compile(r"[A-Za-z_][A-Za-z_.\-/]*\*")
_REFERENCE = re.compile(r"\$(?:[{(A-Za-z_]|$)|\{\{|\{%|%\(|%\{|#\{|<%|@\{")


def is_plain_value(value: str, quoted: bool = False) -> bool:
    """``value`` reads as configuration or code, not as a secret (a reference, a keyword, a path, prose).

    A ``quoted`` value is a string literal: ``"opaque.oauth.token"`` is a
    value, where unquoted ``self.token`` is an expression.
    """
    if _PLACEHOLDER.fullmatch(value.strip()):
        return True  # checked whole: "{p.password}" ends with the brace the next line strips
    value = value.strip().rstrip(",;:)]}")
    if not value or value in ("[", "{", "("):
        return True  # an empty literal, or the start of an expression ("secret=None)", "FALLBACKS = [")
    lowered = value.lower()
    if lowered in _PLAIN_WORDS:
        return True
    if _REFERENCE.match(value) or _PLACEHOLDER.fullmatch(value) or _PLACEHOLDER_START.match(value):
        return True
    if _CONSTANT_NAME.fullmatch(value) or _ENV_LOOKUP.fullmatch(value):
        return True  # OPENAI_API_KEY: the name of a variable
    if not quoted and (_DOTTED_NAME.fullmatch(value) or _SNAKE_NAME.fullmatch(value)):
        # self.token, var.db_password, settings.SECRET_KEY, new_password; not a long generated
        # key that happens to hold dots or underscores (a Mapbox pk.<60>.<22>, a Harness sat.<...>)
        return len(value) < 24 or not looks_random(value)
    if not quoted and _EXPRESSION.match(value):
        return True  # tokens[0], os.Getenv(...)
    if _LOWER_PATH.fullmatch(value) or _ID_PATH.fullmatch(value) or _NAME_GLOB.fullmatch(value):
        return True  # ./pw.txt, /run/secrets/db, LoadCredential=db-password:/etc/creds/db, ImportCredential=api.*
    words = lowered.split()
    return len(words) >= 3 and all(w.isalnum() for w in words) and any(w in _PROSE_WORDS for w in words)


def looks_random(value: str) -> bool:
    """``value`` looks generated (a key, a token), not like words or an identifier.

    Either letters and digits are mixed (ignoring a trailing version number:
    ``regressor_v2`` is a name) over at least 8 distinct characters, or the
    letter case switches often (``AbCdEf...``; ``expirationSeconds`` switches
    once).  Hex digests and UUIDs pass: under a secret's name they are secrets.
    """
    chars = [c for c in value if c.isascii() and c.isalnum()]
    if len(chars) < 8 or any(c.isspace() for c in value):
        return False  # a generated value has no spaces
    core = "".join(chars).rstrip("0123456789")
    has_digit = any(c.isdigit() for c in core)
    if has_digit and any(c.isalpha() for c in core) and len(set(core)) >= 8:
        return True
    switches = sum(1 for a, b in zip(chars, chars[1:], strict=False) if _kind(a) != _kind(b))
    return switches >= len(chars) / 4


def _kind(char: str) -> int:
    return 0 if char.isdigit() else 1 if char.isupper() else 2


# -- names ----------------------------------------------------------------------------------------

_SEGMENT = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# A name's segment that makes its value a secret whatever the value looks like (short passwords too).
_STRONG = frozenset(
    {"password", "passwd", "passphrase", "passcode", "pass", "pwd", "secret", "token", "credential",
     "credentials", "creds", "apikey"}
)  # fmt: skip
# Secret words written glued to another word in one segment (cos_secretkey, snyktoken, dbpassword).
_GLUED_STRONG = ("secretkey", "accesskey", "privatekey", "apikey", "token", "secret", "password", "passwd")
# A segment that makes a random-looking value a secret (OPENAI_KEY, AZURE_DEVOPS_EXT_PAT, SENTRY_DSN).
_WEAK = frozenset({"key", "pat", "sig", "signature", "sas", "hmac", "dsn", "bearer", "cookie", "auth"})
# Segments after the secret word that name something else about it (TOKEN_TTL, password_policy, api_key_id).
_PLAIN_AFTER = frozenset(
    {
        "id", "ids", "name", "names", "type", "types", "count", "counts", "length", "len", "size", "max", "min",
        "limit", "limits", "ttl", "expiry", "expires", "expiration", "expire", "file", "files", "path", "paths",
        "dir", "url", "uri", "endpoint", "host", "port", "header", "prefix", "suffix", "enabled", "mode",
        "version", "hint", "policy", "format", "algorithm", "alg", "env", "var", "field", "label", "kind",
        "ref", "arn", "region", "scope", "scopes", "usage", "fingerprint", "hash", "sha", "digest", "checksum",
        "index", "bytes", "bits", "pattern", "regex", "template", "provider", "store", "engine", "manager",
        "helper", "source", "location", "rotation", "date", "time", "timeout", "seconds", "ms", "duration",
        "lifetime", "budget", "stdin", "command", "cmd", "required", "reset", "strength", "rules", "set",
        "from", "to", "by", "at", "is", "has", "use", "uses", "used", "in", "of", "mount", "volume",
        "tokens", "keys", "secrets", "passwords", "parallelism", "refs", "out", "map", "sources",
    }
)  # fmt: skip
PLAIN_AFTER = _PLAIN_AFTER  # for the provider-name rule (redact_providers.py): the same words end a name's secret
# Words before "key" that make it an ordinary key (of a cache, a table, a map, a keyboard, a public key).
_PLAIN_BEFORE_KEY = frozenset(
    {
        "cache", "sort", "primary", "partition", "foreign", "public", "pub", "idempotency", "dedup", "lookup",
        "hash", "row", "map", "dict", "unique", "routing", "group", "object", "s3", "registry", "hot",
        "shortcut", "keyboard", "composite", "range", "join", "index", "cluster", "sharding", "shard", "jwks",
        "dedupe", "natural", "surrogate", "ssh", "host", "gpg", "pgp", "verify", "verification",
        "sequence", "translation", "i18n", "label", "dictionary", "column", "field", "entry", "item", "next",
        "prev", "last", "first", "start", "end", "config", "setting", "settings", "env", "environment",
    }
)  # fmt: skip


def name_kind(name: str) -> str | None:
    """``"strong"``, ``"weak"`` or None: how much a key's name says its value is a secret.

    The last secret word among the name's segments (split at ``_ . -`` and
    case changes) decides; a plain segment after it (``TOKEN_TTL``,
    ``api_key_id``, ``password_policy``) makes the name about something else.
    """
    segments = [s.lower() for s in _SEGMENT.findall(name)]
    if segments == ["pwd"]:
        return None  # the shell's working directory (PWD=/home/...), in every `env` dump
    for i in range(len(segments) - 1, -1, -1):
        segment = segments[i]
        # "contrase" is Spanish's contraseña / contrasena (the ñ splits the segment)
        strong = segment in _STRONG or segment.startswith(("passw", "contrase")) or segment.endswith(_GLUED_STRONG)
        if not strong and segment not in _WEAK:
            continue
        if any(after in _PLAIN_AFTER for after in segments[i + 1 :]):
            return None
        if i and segments[i - 1] in ("existing", "external"):
            return None  # Helm's existingSecret: the name of a Secret object
        if strong:
            return "strong"
        before = segments[i - 1] if i else ""
        if segment == "key" and before in ("api", "private", "secret", "access", "client", "encryption", "master"):
            return "strong"
        if segment == "key" and (before in _PLAIN_BEFORE_KEY or not before):
            return None  # cache-key, primary_key, a bare "key"
        return "weak"
    return None
