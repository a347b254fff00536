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
    in_runs_by_head,
    in_text,
    key_before,
    literal_head,
    mask_all,
    mask_group,
    mask_named_unless_plain,
    mask_unless_plain,
    mask_unless_plain_literal,
    matches_at,
    occurrences,
    prefiltered,
    runs_of,
    secret_is_quoted,
)
from .pairs import PAIR_RULES
from .providers import PROVIDER_RULES
from .values import is_plain_value, looks_random

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


# Vendor heads that ordinary words and names share (``s.`` of a Python object, ``master-`` of a branch, ``test_``):
# the key after them must look generated and hold a digit.
_WEAK_HEADS = ("s.", "master-", "account-", "key-", "live_", "test_", "API_KEY")
# A segment this long after a short prefix is no word of an identifier (``api_org_<34 letters>``).
_LONGEST_NAME_SEGMENT = 20


def _mask_vendor_key(match: Match[str]) -> str:
    """Mask a vendor key; a lower-case identifier that shares a short prefix (``sk_learn_model``, ``am_pm``) stays."""
    key = match.group(0)
    if key.startswith(_WEAK_HEADS):
        rest = key[len(next(h for h in _WEAK_HEADS if key.startswith(h))) :]
        # a digit too: a CamelCase name switches case as often as a key does ("s.RelatedObjectDoesNotExist")
        return MASK if looks_random(rest) and any(c.isdigit() for c in rest) else key
    if (
        key.lower() == key
        and "_" in key[3:].strip("_")
        and not looks_random(key)
        and max(map(len, key.split("_"))) < _LONGEST_NAME_SEGMENT
    ):
        return key  # snake_case words after the prefix: a name in code
    return MASK


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

_VENDOR_PREFIXES = (
    r"sk-[A-Za-z0-9_-]{10,}",
    r"sk_(?:live|test|prod)_[A-Za-z0-9]{10,}",
    r"rk_(?:live|test|prod)_[A-Za-z0-9]{10,}",
    r"whsec_[A-Za-z0-9]{10,}",
    r"sk_[A-Za-z0-9_]{10,}",
    r"sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}",
    r"gh[pousr]_[A-Za-z0-9]{10,}",
    r"gh[pousr]_[A-Za-z0-9_]{36,255}",
    r"github_pat_[A-Za-z0-9_]{10,}",
    r"glpat-[A-Za-z0-9_=-]{27,300}\.[a-z0-9]{2}\.[a-z0-9]{7,9}",  # routable: <random>.<2>.<base36 9>
    r"glpat-[A-Za-z0-9_=-]{10,}(?:\.[a-z0-9]{9})?",
    r"gl(?:ptt|dt|rt|rtr|cbt|soat|imt|oas|ft|ffct|agent|wt)-[A-Za-z0-9_-]{20,}(?:\.[a-z0-9]{9})?",
    r"GR1348941[A-Za-z0-9_-]{20,}",
    r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
    r"glsa_[A-Za-z0-9_]{41}",
    r"xox[abeoprs]-[A-Za-z0-9-]{10,}",
    r"xapp-[0-9]+-[A-Za-z0-9-]{10,}",
    r"AIza[A-Za-z0-9_-]{30,}",
    r"ya29\.[A-Za-z0-9_-]{10,}",
    r"AKIA[A-Z0-9]{16}",
    r"ASIA[A-Z0-9]{16}",
    r"pplx-[A-Za-z0-9]{10,}",
    r"fal_[A-Za-z0-9_-]{10,}",
    r"fc-[A-Za-z0-9]{10,}",
    r"bb_live_[A-Za-z0-9_-]{10,}",
    r"gAAAA[A-Za-z0-9_=-]{20,}",
    r"SG\.[A-Za-z0-9_=.-]{66}",
    r"SG\.[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]{10,})?",
    r"hf_[A-Za-z0-9]{10,}",
    r"r8_[A-Za-z0-9_-]{37}",
    r"r8_[A-Za-z0-9]{10,}",
    r"npm_[A-Za-z0-9]{10,}",
    r"pypi-[A-Za-z0-9_-]{10,}",
    r"do[opr]_v1_[A-Za-z0-9]{10,}",
    r"am_[A-Za-z0-9_-]{10,}",
    r"tvly-[A-Za-z0-9]{10,}",
    r"exa_[A-Za-z0-9]{10,}",
    r"gsk_[A-Za-z0-9]{10,}",
    r"syt_[A-Za-z0-9]{10,}",
    r"retaindb_[A-Za-z0-9]{10,}",
    r"hsk-[A-Za-z0-9]{10,}",
    r"mem0_[A-Za-z0-9]{10,}",
    r"brv_[A-Za-z0-9]{10,}",
    r"xai-[A-Za-z0-9_-]{30,}",
    r"ntn_[A-Za-z0-9]{10,}",
    r"fw[-_][A-Za-z0-9]{30,}",
    r"fpk_[A-Za-z0-9]{30,}",
    r"shp(?:at|ca|pa|ss)_[A-Fa-f0-9]{20,}",
    r"dapi[a-fA-F0-9]{32}(?:-[0-9])?",
    r"lin_api_[A-Za-z0-9]{20,}",
    r"sq0(?:atp|csp)-[A-Za-z0-9_-]{20,}",
    r"AC(?:[a-fA-F0-9]{32}|[a-z0-9]{32})",
    r"SK(?:[a-fA-F0-9]{32}|[a-z0-9]{32})",
    r"hv[sbr]\.[A-Za-z0-9_.-]{20,}",
    r"s\.[A-Za-z0-9_-]{18,40}",  # Vault's legacy service token (looks generated: see _WEAK_HEADS)
    r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,}",
    r"_gitlab_session=[a-z0-9]{32}",
    # from the provider rules of public secret scanners (gitleaks, detect-secrets), in their documented shapes
    r"api_org_[A-Za-z0-9]{30,}",
    r"CLOJARS_[A-Za-z0-9]{60}",
    r"AKCp[A-Za-z0-9]{69}",
    r"cmVmd[A-Za-z0-9]{59}",
    r"rdme_[a-z0-9]{70}",
    r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}",
    r"PMAK-[A-Za-z0-9-]{59}",
    r"dp\.pt\.[A-Za-z0-9]{43}",
    r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}",
    r"pnu_[A-Za-z0-9]{36}",
    r"ico-[A-Za-z0-9]{32}",
    r"tk-us-[A-Za-z0-9_-]{48}",
    r"API-[A-Z0-9]{26}",
    r"fo1_[A-Za-z0-9_-]{43}",
    r"nfp_[A-Za-z0-9]{36}",
    r"HRKU-AA[A-Za-z0-9_-]{58}",
    r"sntryu_[a-f0-9]{64}",
    r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}",
    r"NR(?:AK|II|JS|BR|IQ|RA)-[A-Za-z0-9_-]{19,32}",
    r"4b1d[A-Za-z0-9]{38}",
    r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}",
    r"tfp_[A-Za-z0-9_.=-]{59}",
    r"tfp_[A-Za-z0-9_]{40,59}",
    r"fio-u-[A-Za-z0-9_=-]{64}",
    r"figd_[A-Za-z0-9_-]{40}",
    r"AGE-SECRET-KEY-1[0-9A-Z]{58}",
    r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
    r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,64}",
    r"sm_(?:pat|aat|sat)_[A-Za-z0-9]{16}",
    r"s-s4t2(?:ud|af)-[a-fA-F0-9]{64}",
    r"GOCSPX-[A-Za-z0-9_-]{28}",
    r"LTAI[A-Za-z0-9]{20}",
    r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}",
    r"AQVN[A-Za-z0-9_-]{35,38}",
    r"t1\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86}",
    r"FLW(?:SECK|PUBK)(?:_TEST)?-[A-Za-z0-9]{12,32}(?:-X)?",
    r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}",
    r"shippo_(?:live|test)_[a-fA-F0-9]{40}",
    r"EZ[AT]K[A-Za-z0-9]{54}",
    r"access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    r"EAA[ACM][A-Za-z0-9_-]{60,}",
    r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}",
    r"xkeysib-[A-Za-z0-9_-]{60,}",
    r"dG9rOj[A-Za-z0-9_=-]{40,}",
    r"sl\.[A-Za-z0-9_=-]{130,}",
    r"CCIPAT_[A-Za-z0-9]{22}_[A-Fa-f0-9]{40}",
    r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}",
    r"pcsk_[A-Za-z0-9_-]{50,}",
    r"oy2[a-z0-9]{43}",
    r"rubygems_[A-Za-z0-9]{48}",
    r"pul-[a-z0-9]{40}",
    # issue 31, measured with bench/scanner_coverage.py against gitleaks' and detect-secrets' rules
    r"p8e-[A-Za-z0-9]{32}",
    r"pat\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}",
    r"sat\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}",
    r"pk\.[A-Za-z0-9]{60}\.[A-Za-z0-9]{22}",
    r"sq[apu]_[A-Za-z0-9_=-]{40}",
    # from trufflehog's detectors (token prefixes of common providers)
    r"aio_[A-Za-z0-9]{28}",
    r"dd[pw]_[A-Za-z0-9]{36}",
    r"dp\.(?:ct|st|sa|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,44}",
    r"CFPAT-[A-Za-z0-9_-]{43}",
    r"shltm_[A-Za-z0-9_-]{40}",
    r"pk-lf-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    r"api-[a-z0-9]{8}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{12}",
    r"sdk-[a-z0-9]{8}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{12}",
    r"nvapi-[A-Za-z0-9_-]{64}",
    r"ak_(?:live|test)_[A-Za-z0-9]{30}",
    r"phx_[A-Za-z0-9_]{43,48}",
    r"pub-c-[0-9a-z]{8}-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{12}",
    r"sub-c-[0-9a-z]{8}-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{12}",
    r"ramp_(?:id|sec)_[A-Za-z0-9]{40,}",
    r"rzp_(?:live|test)_[A-Za-z0-9]{14}",
    r"rh-api-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    r"rootly_[a-f0-9]{64}",
    r"slk_[a-f0-9]{64}",
    r"pi_[A-Za-z0-9]{24}_secret_[A-Za-z0-9]{25}",
    r"pk_(?:live|test)_[A-Za-z0-9]{24,99}",
    r"sbp_[a-z0-9]{40}",
    r"tskey-[a-z]+-[A-Za-z0-9_]{4,}-[A-Za-z0-9_]{8,}",
    r"BBFF-[A-Za-z0-9]{30}",
    r"VF\.(?:(?:DM|WS)\.)?[A-Fa-f0-9]{24}\.[A-Za-z0-9]{16}",
    r"pat-(?:na|eu)1-[A-Za-z0-9]{8}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{12}",
    # issue 41, measured with bench/corpus_coverage.py against trufflehog's detectors and gitleaks' rules
    r"A3T[A-Z0-9][A-Z2-7]{16}",  # AWS key ids with the other documented heads
    r"ABIA[A-Z2-7]{16}",
    r"ACCA[A-Z2-7]{16}",
    r"apify_api_[A-Za-z0-9-]{36}",
    r"da2-[a-z0-9]{26}",  # AWS AppSync
    r"bb_(?:pr|ma)_[a-f0-9]{30}",
    r"ATBB[A-Za-z0-9_=.-]{12,}",  # Bitbucket app passwords
    r"ATATT3[A-Za-z0-9_=-]{100,}",  # Atlassian API tokens
    r"bkua_[a-z0-9]{40}",
    r"cf[uak]t?_[A-Za-z0-9]{40}[a-f0-9]{8}",  # Cloudflare cfat_/cfut_ tokens and cfk_ global keys
    r"figp_[A-Za-z0-9_=-]{40,54}",
    r"fig[uo][rh]?_[A-Za-z0-9_-]{40}",
    r"pgar_[A-Za-z0-9]{27}",
    r"pk_(?:[0-9a-f]{34}|[A-Za-z0-9]{6}_[0-9a-f]{34})",  # Klaviyo
    r"salad_cloud_[A-Za-z0-9]{1,7}_[A-Za-z0-9]{7,235}",
    r"5A[Ee][Pp]861[A-Za-z0-9._=]{80,}",  # Salesforce refresh tokens
    r"sqco_[A-Za-z0-9]{59}",
    r"spu-[a-z0-9]{32}",
    r"thog-(?:key-[0-9a-f]{16}|secret-[0-9a-f]{32})",
    r"1000\.[a-f0-9]{32}\.[a-f0-9]{32}",  # Zoho
    r"oaa[A-Za-z0-9]{14}\.v1\.[A-Za-z0-9_-]{20,}(?:\.[a-f0-9]+)?",  # Airtable OAuth
    r"0\.A[A-Za-z0-9_-]{50,}(?:\.[0-9])?\.Ag[A-Za-z0-9_-]{100,}(?:\.A[A-Za-z0-9_-]{100,})?",  # Entra refresh
    r"1\.A[A-Za-z0-9_-]{50,}(?:\.[0-9])?\.Ag[A-Za-z0-9_-]{100,}(?:\.A[A-Za-z0-9_-]{100,})?",
    r"dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}",  # Defined Networking
    r"ZXlK[A-Za-z0-9_-]{30,}={0,2}",  # a JWT ("eyJ...") base64-encoded once more
    r"EAAA[A-Za-z0-9_-]{22,60}",  # Square access tokens
    # heads that ordinary words share: masked only when the rest looks generated (_WEAK_HEADS)
    r"master-[A-Za-z0-9]{20}",  # Gemini (the exchange)
    r"account-[A-Za-z0-9]{20}",
    r"key-[a-z0-9]{32}",  # Mailgun
    r"live_[a-f0-9]{35}",  # Lob
    r"test_[a-f0-9]{35}",
    r"API_KEY[A-Z0-9]{32}",  # Finage
)
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
# Every character a vendor key can hold, and the shortest key (13: "sk-" + 10).
_VENDOR_KEY_RUNS = runs_of(_ALNUM + "_.=-", 13)
# Vendor keys with a base64 body ("+" and "/" would join the runs above with every base64 blob): their own rule.
_BASE64_VENDOR_KEYS = (
    r"glc_[A-Za-z0-9+/=]{32,}",
    r"ATCTT3xFfG[A-Za-z0-9+/=_-]{8,}",  # Atlassian (Confluence, Jira) API tokens
    r"endr\+[A-Za-z0-9-]{16}",  # Endor Labs
    r"git&[0-9]{12}&[A-Za-z0-9+/]{80,}={0,2}",  # Azure API Management repository keys
    r"FlyV1 fm[0-9]+_[A-Za-z0-9+/=,_-]{50,}",
    r"fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3}",
    r"sntrys_eyJ[A-Za-z0-9+/=_]{50,}",
    r"ops_eyJ[A-Za-z0-9+/]{250,}={0,3}",
    r"ABSK[A-Za-z0-9+/]{109,}={0,2}",
    r"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%&._-]*",
)
_BASE64_VENDOR_HEADS = (
    "glc_",
    "fm1",
    "fm2",
    "sntrys_",
    "ops_eyJ",
    "ABSK",
    "bedrock-api-key-",
    "ATCTT3xFfG",
    "endr+",
    "git&",
    "FlyV1 fm",
    "sc_",
    "ext_",
    "scauth_",
    "authress_",
)
_VENDOR_BEFORE, _VENDOR_AFTER = r"(?<![A-Za-z0-9_])", r"(?![A-Za-z0-9_-])"

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
    Rule(
        re.compile(_VENDOR_BEFORE + "(?:" + "|".join(_VENDOR_PREFIXES) + ")" + _VENDOR_AFTER),
        _mask_vendor_key,
        always,
        # The lookbehind allows "." "=" and "-" of a run before a key ("--token-glpat-...", "x=-sk-...").
        in_runs_by_head(_VENDOR_KEY_RUNS, _VENDOR_PREFIXES, _VENDOR_BEFORE, _VENDOR_AFTER),
    ),
    Rule(
        re.compile(r"(?<![A-Za-z0-9_+/])(?:" + "|".join(_BASE64_VENDOR_KEYS) + r")(?![A-Za-z0-9_+/=])"),
        mask_all,
        in_text(any_of=_BASE64_VENDOR_HEADS),
        at_words(*_BASE64_VENDOR_HEADS),
    ),
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
