"""Keys named only for their provider (``TWITTER=<key>``), and provider key shapes without a literal head.

Secret scanners anchor many provider rules on the provider's name rather
than on a token prefix: a random value under ``twitter``, ``sumo`` or
``kucoin`` is a key even when the name holds no secret word.  The pair
rule reads the name; here it must hold a provider's name as a whole
segment (``blob_sha`` does not hold ``lob``), nothing after it may name
something else (``sentry_url``, ``heroku_app``), and the value must look
generated (12+ characters, letters and digits mixed: ``linear = nn.Linear(4)``
stays).  The other rules are token shapes whose start is not a literal
(``<15 digits>|<secret>``, ``<14>.atlasv1.<...>``): each is found from its
fixed middle.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from re import Match

from .match import Finder, Haystack, Rule, at_lowered_words, at_words, before_mark, in_lowered, in_text, matches_at
from .pairs import line_end_after, line_start_before, pair_pattern
from .replacements import mask_all, mask_group, mask_if_random, secret_is_quoted
from .values import PLAIN_AFTER, is_plain_value, looks_random

__all__ = ["PROVIDER_RULES", "PROVIDER_WORDS"]

# Providers whose keys scanners find by the provider's name next to them (lower case, one name segment each;
# several-word names written together, as "newrelic" also stands for "new_relic").
PROVIDER_WORDS = (
    "adafruit", "adobe", "airtable", "algolia", "alibaba", "aliyun", "amplitude", "asana", "atlassian", "auth0",
    "authress", "beamer", "bitbucket", "bittrex", "braintree", "bugsnag", "circleci", "clickup", "cloudflare",
    "codecov", "cohere", "coinbase", "confluence", "confluent", "contentful", "databricks", "datadog", "digitalocean",
    "discord", "docusign", "doppler", "drone", "droneci", "dropbox", "dynatrace", "etsy", "facebook", "fastly",
    "finicity", "finnhub", "firebase", "flickr", "freshbooks", "gitter", "gocardless", "grafana", "heroku",
    "honeycomb", "hubspot", "intercom", "jfrog", "artifactory", "jira", "kraken", "kucoin", "launchdarkly", "linear",
    "linkedin", "lob", "looker", "mailchimp", "mailgun", "mandrill", "mapbox", "mattermost", "meraki", "messagebird",
    "mixpanel", "netlify", "newrelic", "nytimes", "okta", "opsgenie", "pagerduty", "paypal", "paystack", "plaid",
    "postmark", "privateai", "pusher", "rapidapi", "razorpay", "rollbar", "sendbird", "sendgrid", "sentry", "shippo",
    "shopify", "snyk", "sonar", "sonarqube", "sparkpost", "squarespace", "sumo", "sumologic", "supabase", "telegram",
    "travis", "travisci", "twilio", "twitch", "twitter", "typeform", "vercel", "yandex", "zendesk", "zoom",
)  # fmt: skip
_WORDS = frozenset(PROVIDER_WORDS) | {"newyorktimes"}
# The names of several words as a name writes them (new_relic, NEW-RELIC, NyTimes), for the pattern.
_SPLIT_WORDS = (
    r"new[_.-]relic", r"new[_.-]?york[_.-]?times", r"ny[_.-]times", r"private[_.-]ai", r"sumo[_.-]logic",
    r"launch[_.-]darkly", r"message[_.-]bird", r"rapid[_.-]api", r"travis[_.-]ci", r"drone[_.-]ci",
    r"digital[_.-]ocean", r"square[_.-]space", r"fresh[_.-]books", r"go[_.-]cardless", r"pager[_.-]duty",
    r"linked[_.-]in",
)  # fmt: skip
# Segments after the provider's name that say what else the value is (a place, a person, a version).
_PLAIN_AFTER_PROVIDER = PLAIN_AFTER | {
    "commit", "rev", "revision", "user", "username", "email", "org", "owner", "repo", "project", "branch",
    "tag", "image", "release", "build", "run", "job", "channel", "team", "workspace", "domain", "zone", "bucket",
    "table", "model", "site", "page", "theme", "layer", "layers", "plugin", "version",
}  # fmt: skip
_SEGMENT = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_MIN_VALUE = 12


def _provider_at(segments: list[str]) -> int:
    """The index after the provider's name in ``segments`` (-1 when none is there)."""
    for i in range(len(segments)):
        for width in range(1, min(3, len(segments) - i) + 1):  # new_relic, ny_times, new_york_times
            if "".join(segments[i : i + width]) in _WORDS:
                return i + width
    return -1


# An OAuth client's or an access key's id (ADOBE_CLIENT_ID, sendbird_access_id): scanners report a generated
# one with its secret; a number (an account, a guild) or a word stays.
_CLIENT_ID_SEGMENTS = frozenset({"client", "access", "api", "app", "user", "key", "id"})
_MIN_CLIENT_ID = 14


def _generated_client_id(after_provider: list[str], value: str) -> bool:
    return (
        bool(after_provider)
        and after_provider[-1] == "id"
        and set(after_provider) <= _CLIENT_ID_SEGMENTS
        and len(value) >= _MIN_CLIENT_ID
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and looks_random(value)
    )


def _mask_provider_pair(match: Match[str]) -> str:
    name, value = match.group("name"), match.group("secret")
    segments = [s.lower() for s in _SEGMENT.findall(name)]
    after = _provider_at(segments)
    if after < 0:
        return match.group(0)
    if any(segment in _PLAIN_AFTER_PROVIDER for segment in segments[after:]) and not _generated_client_id(
        segments[after:], value
    ):
        return match.group(0)
    if len(value) < _MIN_VALUE or not looks_random(value) or is_plain_value(value, secret_is_quoted(match)):
        return match.group(0)
    if "://" in value or "@" in value:
        return match.group(0)  # a URL or an address (one with a password has its own rule)
    if match.group("sep") == ":" and not match.group("q") and len(value) < 16:
        text = match.string
        if not line_start_before(text, match.start()) or not line_end_after(text, match.end()):
            return match.group(0)  # "Twitter: see the 2FA docs" is prose; a YAML key starts and ends its line
    return mask_group(match)


_DIGITS = re.compile(r"[0-9]+")
_ALNUM = re.compile(r"[A-Za-z0-9]+")


def _either(*finders: Finder) -> Finder:
    """Matches of each finder, in text order (the replacement skips any inside an earlier one)."""

    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        found = {m.start(): m for finder in finders for m in finder(pattern, haystack)}
        return [found[at] for at in sorted(found)]

    return find


# A separator followed by the start of a value long enough to be a key (most "=" and ":" of code are not).
# Two patterns with a literal head ("=", ":"): re finds a literal fast, where an alternation scans 7 times slower.
_SEPARATORS_BEFORE_VALUE = (
    re.compile(r"=>?[ \t]*['\"`]?(?=[A-Za-z0-9_+/.=-]{12})"),
    re.compile(r":[ \t]*['\"`]?(?=[A-Za-z0-9_+/.=-]{12})"),
)
_BEFORE_SEPARATOR = " \t'\"]?:+"
_LAST_OUTSIDE_NAME = re.compile(r"(?s).*[^A-Za-z0-9_.\-]")


def _names_a_provider(name: str) -> bool:
    return _provider_at([s.lower() for s in _SEGMENT.findall(name)]) >= 0


def _at_provider_names(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
    """Matches from the start of each name that holds a provider's name and precedes a separator and a long value.

    Searching a hundred provider names would scan the text a hundred times;
    the separators before a value of 12+ key characters are found in one
    scan instead, and the name before each is read backwards and split into
    segments (``blob_sha`` holds no provider, ``TWITTER_KEY`` does).
    """
    text = haystack.text
    starts: set[int] = set()
    for separator in (found for pattern_ in _SEPARATORS_BEFORE_VALUE for found in pattern_.finditer(text)):
        end = separator.start()
        while end > 0 and text[end - 1] in _BEFORE_SEPARATOR:
            end -= 1
        low = max(0, end - 100)
        outside = _LAST_OUTSIDE_NAME.match(text, low, end)
        start = outside.end() if outside else low
        if start < end and (outside or low == 0) and _names_a_provider(text[start:end]):
            starts.add(start)
    return matches_at(pattern, text, sorted(starts))


PROVIDER_RULES: tuple[Rule, ...] = (
    Rule(
        pair_pattern(PROVIDER_WORDS + _SPLIT_WORDS), _mask_provider_pair, in_text(any_of=("=", ":")), _at_provider_names
    ),
    # Facebook app access tokens: "<app id>|<app secret>" (or the "|" URL-encoded, or "%" as gitleaks reads them).
    Rule(
        re.compile(r"(?<![0-9])[0-9]{15,16}(?:\||%7C|%)[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])"),
        mask_all,
        in_text(any_of=("|", "%")),
        _either(before_mark("|", (15, 16), _DIGITS), before_mark("%", (15, 16), _DIGITS)),
    ),
    # Terraform Cloud / Enterprise API tokens: <14>.atlasv1.<60-70>.
    Rule(
        re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}(?![A-Za-z0-9_=-])"),
        mask_all,
        in_text(".atlasv1."),
        before_mark(".atlasv1.", (14,), _ALNUM),
    ),
    # Artifactory API keys and passwords (AKC..., AP<hex>...), when they look generated ("APEXAnalytics" stays).
    Rule(
        re.compile(r"(?<![A-Za-z0-9_])(?:AKC[A-Za-z0-9]{10,}|AP[0-9A-F][A-Za-z0-9]{8,})(?![A-Za-z0-9_])"),
        mask_if_random,
        in_text(any_of=("AKC", "AP")),
        at_words("AKC", "AP"),
    ),
    # Authress service client access keys: <account>_<id>.<region>.acc_<client>.<base64 secret>.
    Rule(
        re.compile(
            r"(?<![A-Za-z0-9_+/])(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-]"
            r"[A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}(?![A-Za-z0-9_+/=])"
        ),
        mask_all,
        in_text(".acc"),
        at_words("sc_", "ext_", "scauth_", "authress_"),
    ),
    # Mailchimp API keys: 32 characters and the data centre (-us21).
    Rule(
        re.compile(r"(?<![A-Za-z0-9_])[0-9A-Za-z]{32}-us[0-9]{1,2}(?![A-Za-z0-9_])"),
        mask_if_random,
        in_text("-us"),
        before_mark("-us", (32,), _ALNUM),
    ),
    # New Relic license keys (<32 hex>FFFFNRAL, or eu01xx<26 hex>FFFFNRAL) and mobile app tokens (...-NRMA).
    Rule(
        re.compile(r"(?<![A-Za-z0-9_])[A-Za-z0-9]{32}FFFFNRAL(?![A-Za-z0-9_])"),
        mask_if_random,
        in_text("FFFFNRAL"),
        before_mark("FFFFNRAL", (32,), _ALNUM),
    ),
    Rule(
        re.compile(r"(?<![A-Za-z0-9_])[A-Za-z0-9]{42}-NRMA(?![A-Za-z0-9_])"),
        mask_if_random,
        in_text("-NRMA"),
        before_mark("-NRMA", (42,), _ALNUM),
    ),
    # Sidekiq Enterprise / Pro credentials in Bundler's environment variable.
    Rule(
        re.compile(
            r"(?i)BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM['\"]?[ \t]*(?::=|=|:)[ \t]*['\"]?"
            r"(?P<secret>[A-Fa-f0-9]{8}:[A-Fa-f0-9]{8})"
        ),
        mask_group,
        in_lowered("contribsys__com"),
        at_lowered_words("bundle_enterprise__", "bundle_gems__"),
    ),
    # ... and in the gem source URL, where the "user" half is part of the credential too.
    Rule(
        # (the URL password rule ran first: the password half may already be a mask)
        re.compile(r"(?i)://(?P<secret>[a-f0-9]{8}:(?:[a-f0-9]{8}|\[REDACTED\]))@(?:gems|enterprise)\.contribsys\.com"),
        mask_group,
        in_lowered("contribsys.com"),
        at_words("://"),
    ),
)
