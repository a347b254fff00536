"""Vendor keys known by their prefix (``sk-``, ``ghp_``, ``glpat-``, ...), with a plain or a base64 body.

The longest catalogue of the redaction rules, kept apart from :mod:`.rules`,
which places :data:`VENDOR_KEY_RULES` in its order (after the private keys,
before JWTs).  Each rule is found from its literal heads (:mod:`.match`), and
a short head that ordinary words share must be followed by a generated-looking
key before it is masked.
"""

from __future__ import annotations

import re
from re import Match

from .match import MASK, Rule, always, at_words, in_runs_by_head, in_text, runs_of
from .replacements import mask_all
from .values import looks_random

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

# In order, as :data:`.rules.RULES` runs them.
VENDOR_KEY_RULES: tuple[Rule, ...] = (
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
)
