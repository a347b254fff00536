"""The secret patterns :mod:`.redact` applies, each with a cheap way to find it.

A rule is a regex and a replacement, plus two accelerators that never change
the result: a ``gate`` (a necessary condition checked with substring
searches: when it fails the regex cannot match) and a ``find`` (the matches
of the regex, located from the places a match can begin instead of trying
the pattern at every character).  Python's ``re`` tries a pattern that opens
with an alternation or a lookbehind at every position of the text, which is
what made redaction the slowest step of a compaction; substring searches and
anchored matches at a handful of candidates are an order of magnitude faster.
``tests/context_engine/test_redact.py`` checks the accelerated rules against
the plain ``pattern.sub`` of every rule, on a corpus and on generated text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from re import Match

MASK = "[REDACTED]"

Replace = Callable[[Match[str]], str]


def fold_case(text: str) -> str:
    """Lower case, with the two letters ``re.IGNORECASE`` also equates to ASCII ones (ı, ſ).

    Keeps every position: gates and finders look up words here and match
    the case-insensitive patterns at the same offsets in the text.
    """
    lowered = text.lower()
    if not text.isascii() and ("ı" in lowered or "ſ" in lowered):
        lowered = lowered.replace("ı", "i").replace("ſ", "s")
    return lowered


class Haystack:
    """A text, its folded lower case, and memoized substring tests on both.

    Several rules ask about the same words ("token", "key", "secret"...),
    and a word that is absent costs a scan of the whole text each time it
    is asked about; one Haystack serves every rule until the text changes.
    """

    __slots__ = ("text", "lowered", "_in_text", "_in_lowered")

    def __init__(self, text: str) -> None:
        self.text, self.lowered = text, fold_case(text)
        self._in_text: dict[str, bool] = {}
        self._in_lowered: dict[str, bool] = {}

    def has(self, word: str) -> bool:
        """``word`` occurs in the text (case-sensitive)."""
        return _memo_contains(self._in_text, self.text, word)

    def lower_has(self, word: str) -> bool:
        """``word`` (lower case) occurs in the folded text."""
        return _memo_contains(self._in_lowered, self.lowered, word)


def _memo_contains(memo: dict[str, bool], text: str, word: str) -> bool:
    found = memo.get(word)
    if found is None:
        found = memo[word] = word in text
    return found


Gate = Callable[[Haystack], bool]  # may the pattern match?
Finder = Callable[[re.Pattern[str], Haystack], Iterable[Match[str]]]  # the pattern's matches


@dataclass(frozen=True, slots=True)
class Rule:
    pattern: re.Pattern[str]
    replace: Replace
    gate: Gate
    find: Finder | None = None  # None: ``pattern.finditer(text)``


# -- replacements -------------------------------------------------------------------------------

def _mask_group(match: Match[str]) -> str:
    """Mask only the ``secret`` group, keeping the key, header or URL around it."""
    text = match.group(0)
    base = match.start(0)
    start, end = match.span("secret")
    return text[: start - base] + MASK + text[end - base:]


def _mask_all(match: Match[str]) -> str:
    return MASK


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


# -- gates ----------------------------------------------------------------------------------------

def _always(haystack: Haystack) -> bool:
    return True


def _in_text(*required: str, any_of: tuple[str, ...] = ()) -> Gate:
    """All of ``required`` and one of ``any_of`` occur in the text (case-sensitive)."""
    def gate(haystack: Haystack) -> bool:
        return all(map(haystack.has, required)) and (not any_of or any(map(haystack.has, any_of)))
    return gate


def _in_lowered(*any_of: str, text_requires: tuple[str, ...] = ()) -> Gate:
    """All of ``text_requires`` occur in the text and one of ``any_of`` in its lower case."""
    def gate(haystack: Haystack) -> bool:
        return all(map(haystack.has, text_requires)) and any(map(haystack.lower_has, any_of))
    return gate


# -- finders --------------------------------------------------------------------------------------

def occurrences(haystack: str, needles: Iterable[str]) -> list[int]:
    """Sorted start positions of every occurrence of every needle."""
    found: list[int] = []
    for needle in needles:
        at = haystack.find(needle)
        while at != -1:
            found.append(at)
            at = haystack.find(needle, at + 1)
    found.sort()
    return found


def _matches_at(pattern: re.Pattern[str], text: str, starts: Iterable[int]) -> Iterator[Match[str]]:
    last = -1
    for start in starts:
        if start != last:
            last = start
            match = pattern.match(text, start)
            if match:
                yield match


def _on_lowered_positions(find: Finder) -> Finder:
    """``find`` reads positions off the lower-cased text; when lower-casing moved them, scan plainly.

    lower() never shrinks a text and rarely grows it (``İ``), so equal
    lengths mean every position in ``lowered`` is the same one in ``text``.
    """
    def guarded(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        if len(haystack.text) != len(haystack.lowered):
            return pattern.finditer(haystack.text)
        return find(pattern, haystack)
    return guarded


_LAST_NON_WORD = re.compile(r"(?s).*[^A-Za-z0-9_]")
_WORD_RUN = re.compile(r"[A-Za-z0-9_]*")


def _word_run_start(text: str, at: int) -> int:
    """Start of the ``[A-Za-z0-9_]`` run holding position ``at`` (scanned back in C-sized steps)."""
    high = at
    while high > 0:
        low = max(0, high - 256)
        match = _LAST_NON_WORD.match(text, low, high)
        if match:
            return match.end()
        high = low
    return 0


def _at_identifier_holding(*words: str) -> Finder:
    """Matches that begin at the start of an identifier containing one of ``words`` (case-sensitive)."""
    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        text = haystack.text
        starts: list[int] = []
        run_end = -1
        for at in occurrences(text, [word for word in words if haystack.has(word)]):
            if at >= run_end:
                starts.append(_word_run_start(text, at))
                run_end = max(at + 1, _WORD_RUN.match(text, at).end())  # type: ignore[union-attr]  # a * pattern always matches
        return _matches_at(pattern, text, starts)
    return find


def _runs_of(chars: str, min_length: int) -> Callable[[str], Iterator[tuple[int, int]]]:
    """A function giving the ``(start, end)`` of each run of ASCII ``chars`` at least ``min_length`` long.

    The text's UTF-8 bytes are mapped to a "shape" (``a`` in the class, a
    space otherwise) and runs are found with ``bytes.find``: C speed, where a
    regex for the same runs retries at every character.
    """
    table = bytes(97 if i < 128 and chr(i) in chars else 32 for i in range(256))
    needle = b"a" * min_length

    def runs(text: str) -> Iterator[tuple[int, int]]:
        data = text.encode("utf-8", "surrogatepass")
        shape = data.translate(table)
        position = _CharPositions(text, data)
        at = shape.find(needle)
        while at != -1:
            start = shape.rfind(b" ", 0, at) + 1
            end = shape.find(b" ", at)
            end = len(shape) if end == -1 else end
            yield position(start), position(end)
            at = shape.find(needle, end)
    return runs


class _CharPositions:
    """Converts increasing UTF-8 byte offsets (at character boundaries) to string offsets."""

    def __init__(self, text: str, data: bytes) -> None:
        self._data = data
        self._same = len(data) == len(text)
        self._byte = self._char = 0

    def __call__(self, offset: int) -> int:
        if self._same:
            return offset
        self._char += len(self._data[self._byte:offset].decode("utf-8", "surrogatepass"))
        self._byte = offset
        return self._char


def _in_runs(runs: Callable[[str], Iterator[tuple[int, int]]], heads: tuple[str, ...], boundaries: str) -> Finder:
    """Matches inside the runs (the pattern's characters are all in the run's class).

    A match begins where the run begins or just after one of ``boundaries``
    (run characters the pattern's lookbehind allows before a match), and
    with one of ``heads`` (the literal start of each alternative): a
    ``startswith`` test drops the other places before any regex runs.
    """
    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterator[Match[str]]:
        text = haystack.text
        for start, end in runs(text):
            candidates = [start]
            for mark in boundaries:
                at = text.find(mark, start, end)
                while at != -1:
                    candidates.append(at + 1)
                    at = text.find(mark, at + 1, end)
            if len(candidates) > 1:
                candidates.sort()
            matched_to = start
            for at in candidates:
                if at >= matched_to and text.startswith(heads, at, end):
                    match = pattern.match(text, at, end)
                    if match:
                        matched_to = match.end()
                        yield match
    return find


def literal_head(alternative: str) -> str:
    """The literal characters an alternative of a pattern starts with (``"ya29"`` for ``ya29\\.[A-Z]+``)."""
    head = re.match(r"[A-Za-z0-9_-]*", alternative).group()  # type: ignore[union-attr]  # a * pattern always matches
    if head and alternative[len(head):len(head) + 1] in ("?", "*", "{"):
        head = head[:-1]  # the last character is optional
    if not head:
        raise ValueError(f"no literal start in the pattern alternative {alternative!r}")
    return head


def _prefiltered(prefilter: str) -> Finder:
    """Matches that begin where ``prefilter`` matches in the lower-cased text.

    The prefilter is the pattern's opening part without ``(?i)``: on
    lower-cased text ``re`` scans it several times faster (a case-sensitive
    literal or class prefix lets it skip ahead).  It must match at every
    position a real match begins, and no real match may begin inside one of
    its matches (each use below says why).
    """
    compiled = re.compile(prefilter)

    @_on_lowered_positions
    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        return _matches_at(pattern, haystack.text, (m.start() for m in compiled.finditer(haystack.lowered)))
    return find


def _at_words_before_space(*words: str) -> Finder:
    """Matches that begin at one of ``words`` followed by whitespace (found with ``str.find``)."""
    @_on_lowered_positions
    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        lowered = haystack.lowered
        end = len(lowered)
        starts = [at for word in words if haystack.lower_has(word) for at in occurrences(lowered, (word,))
                  if at + len(word) < end and lowered[at + len(word)].isspace()]
        starts.sort()
        return _matches_at(pattern, haystack.text, starts)
    return find


_KEY_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_.-"


def _at_line_key(*parts: str) -> Finder:
    """Matches that begin at the start of a line whose leading key (after indentation) holds one of ``parts``.

    From the first occurrence of a part in a line (``str.find``), the line
    is a candidate when everything between its start and the part is
    indentation, dashes and key characters: prose lines, where a space comes
    first, drop out without a regex.  The search then goes on at the next
    line: a later occurrence in the same line has the same verdict (its
    prefix holds the earlier one's, and a character that is neither
    indentation nor a key's stays in it).
    """
    @_on_lowered_positions
    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        lowered = haystack.lowered
        starts: set[int] = set()
        for part in parts:
            at = lowered.find(part) if haystack.lower_has(part) else -1
            while at != -1:
                line_start = lowered.rfind("\n", 0, at) + 1
                if line_start not in starts and not lowered[line_start:at].lstrip(" \t-").strip(_KEY_CHARS):
                    starts.add(line_start)
                line_end = lowered.find("\n", at)
                at = lowered.find(part, line_end) if line_end != -1 else -1
        return _matches_at(pattern, haystack.text, sorted(starts))
    return find


def _key_before(mark: str, starts: tuple[str, ...], reach: int) -> Finder:
    """Matches of ``<key holding a start word> <whitespace> mark``, found from each ``mark`` back.

    ``reach`` bounds how far before the whitespace a match can begin (the
    longest secret word with its longest suffix).
    """
    @_on_lowered_positions
    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        text, lowered = haystack.text, haystack.lowered
        found: set[int] = set()
        for at in occurrences(text, (mark,)):
            end = at
            while end > 0 and text[end - 1].isspace():
                end -= 1
            low = max(0, end - reach)
            window = lowered[low:end]
            for word in starts:
                hit = window.find(word)
                while hit != -1:
                    found.add(low + hit)
                    hit = window.find(word, hit + 1)
        return _matches_at(pattern, text, sorted(found))
    return find


def _after_digits(count: int, mark: str) -> Finder:
    """Matches that begin at ``mark`` right after ``count`` digits (no scan with a lookbehind)."""
    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        text = haystack.text
        starts = [at for at in occurrences(text, (mark,)) if at >= count and text[at - count:at].isdecimal()]
        return _matches_at(pattern, text, starts)
    return find


def _at_words(*words: str) -> Finder:
    """Matches that begin where one of ``words`` occurs in the text (case-sensitive)."""
    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        return _matches_at(pattern, haystack.text, occurrences(haystack.text, [w for w in words if haystack.has(w)]))
    return find


def _at_lowered_words(*words: str) -> Finder:
    """Matches that begin where one of ``words`` (lower case) occurs in the folded text."""
    @_on_lowered_positions
    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        return _matches_at(pattern, haystack.text,
                           occurrences(haystack.lowered, [w for w in words if haystack.lower_has(w)]))
    return find


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
_VENDOR_KEY_RUNS = _runs_of(_ALNUM + "_.=-", 13)
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
         _mask_all, _in_text("PRIVATE KEY-----")),
    Rule(re.compile(r"(?<![A-Za-z0-9_])(?:" + "|".join(_VENDOR_PREFIXES) + r")(?![A-Za-z0-9_-])"),
         _mask_all, _always,
         # The lookbehind allows "." "=" and "-" of a run before a key ("--token-glpat-...", "x=-sk-...").
         _in_runs(_VENDOR_KEY_RUNS, _VENDOR_HEADS, ".=-")),
    Rule(re.compile(r"eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_=-]{4,}){0,2}"), _mask_all, _in_text("eyJ")),
    Rule(re.compile(r"(?i)authorization\s*:\s*(?:[A-Za-z][\w.+-]*\s+)?(?P<secret>[^\s\"',;]+)"),
         _mask_group, _in_lowered("authorization")),
    Rule(re.compile(r"(?i)\b(?:bearer|basic|token)\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})"),
         # No gate: the finder's own word searches are the gate.
         _mask_group, _always, _at_words_before_space("bearer", "basic", "token")),
    Rule(re.compile(r"(?i)\b(?:x-api-key|x-goog-api-key|api-key|apikey|x-api-token|x-auth-token|x-access-token)"
                    r"\s*:\s*(?P<secret>[^\s\"',;]+)"),
         _mask_group, _in_lowered("api-key", "-token", "apikey")),
    Rule(re.compile(r"://[^\s:/@]+:(?P<secret>[^\s@/]+)@"), _mask_group, _in_text("://")),
    Rule(re.compile(r"(?i)(?:https?|wss?|git|ssh|ftps?|sftp)://(?P<secret>[^\s:@/]{8,})@[^\s]"),
         _mask_group, _in_text("://")),
    Rule(re.compile(r"(?P<sep>[?&;#])(?P<key>[A-Za-z0-9_.\-]+)=(?P<secret>[^&;#\s\"'<>]*)"),
         _mask_query, _in_text("="),
         # Only secret keys change: a match runs from its separator to its value, which holds no separator.
         _prefiltered(r"[?&;#](?:" + "|".join(sorted(map(re.escape, _SECRET_QUERY_KEYS), key=len, reverse=True)) + ")=")),
    Rule(re.compile(r"(?i)\"(?:" + _SECRET_KEY + r"|bearer|authorization|key_material|secret_input)\"\s*:\s*"
                    r"\"(?P<secret>[^\"]+)\""),
         _mask_group, _in_lowered(*_JSON_KEY_PARTS, text_requires=('"', ":")),
         # From a key's opening quote to its colon: a match begins only at an opening quote.
         _prefiltered(r'"[a-z0-9_.\-]*(?:key|secret|token|passw|credential|bearer|authorization)[a-z0-9_.\-]*"\s*:')),
    Rule(re.compile(r"(?i)" + _SECRET_WORD + r"(?:[_.\-]?(?:access[_.\-]?key|key|value|string))?\s*=\s*(['\"]?)"
                    r"(?P<secret>" + _NOT_A_LOOKUP + r"[^\s'\"&]+)\1"),
         _mask_group, _in_lowered(*_SECRET_WORD_PARTS, text_requires=("=",)),
         _key_before("=", _SECRET_WORD_STARTS, _SECRET_WORD_REACH)),
    Rule(re.compile(r"(?<![A-Za-z0-9_])(?:[A-Z0-9]+_)*" + _ENV_SECRET_SEGMENT + r"(?:_(?!" + _ENV_PLAIN_SEGMENT
                    + r")[A-Z0-9]+)*\s*=\s*(['\"]?)(?P<secret>" + _NOT_A_LOOKUP + r"[^\s'\"&]+)\1"),
         _mask_group, _in_text("=", any_of=_ENV_SECRET_PARTS), _at_identifier_holding(*_ENV_SECRET_PARTS)),
    # YAML-like "key: value" lines: quoted values may hold spaces, unquoted ones run to a " #" comment,
    # and a CRLF line end is a line end.
    Rule(re.compile(r"(?im)^[ \t-]*" + _SECRET_KEY + r"[ \t]*:[ \t]*(['\"])?(?P<secret>(?(1)[^'\"\r\n]+|"
                    r"[^\s'\"#][^\r\n]*?))(?(1)\1)(?:[ \t]+#[^\r\n]*)?[ \t]*\r?$"),
         _mask_group, _in_text(":"), _at_line_key(*_SECRET_WORD_PARTS)),  # the finder searches the parts
    Rule(re.compile(r"(?<=\d{8}):(?P<secret>[A-Za-z0-9_-]{30,})"), _mask_group, _in_text(":"),
         _after_digits(8, ":")),
    # Webhook URLs are their own credential: the path after the fixed part is the secret.
    Rule(re.compile(r"(?:hooks\.slack\.com/(?:services|workflows|triggers)/|discord(?:app)?\.com/api/webhooks/"
                    r"[0-9]+/)(?P<secret>[A-Za-z0-9_/-]+)"),
         _mask_group, _in_text(any_of=("hooks.slack.com/", "/api/webhooks/")),
         _at_words("hooks.slack.com/", "discord.com/api/webhooks/", "discordapp.com/api/webhooks/")),
    # Azure storage and service-bus connection strings (AccountKey=...;).
    Rule(re.compile(r"(?i)(?:account|shared[_-]?access)[_-]?key\s*=\s*(?P<secret>[^\s;'\"&]+)"),
         _mask_group, _in_lowered(*_AZURE_KEY_HEADS, text_requires=("=",)), _at_lowered_words(*_AZURE_KEY_HEADS)),
    # An AWS secret access key (40 base64 characters) a few characters after its name, in any notation
    # (CLI arguments, tables, colons); "=" and JSON forms are masked by the rules above.
    Rule(re.compile(r"(?i)(?:aws[_-]?secret[_-]?(?:access[_-]?)?key|secret[_-]?access[_-]?key)"
                    r"[^A-Za-z0-9/+\n]{1,12}(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
         _mask_group, _in_lowered(*_AWS_SECRET_HEADS), _at_lowered_words(*_AWS_SECRET_HEADS)),
    # Passwords given on a command line: mysql-family -p<password>, docker login -p <password>,
    # --password <password>, and .netrc "password <password>" after a machine entry.
    Rule(re.compile(r"\b(?:mysql[a-z]*|mariadb[a-z-]*)\b[^\n]*?[ \t]-p(['\"]?)(?P<secret>[^\s'\"]+)\1"),
         _mask_group, _in_text("-p", any_of=("mysql", "mariadb")), _at_words("mysql", "mariadb")),
    Rule(re.compile(r"\bdocker[ \t]+login\b[^\n]*?[ \t]-p[ \t]+(['\"]?)(?P<secret>[^\s'\"]+)\1"),
         _mask_group, _in_text("login", "-p"), _at_words("docker")),
    Rule(re.compile(r"(?<![\w-])--password[ \t]+(['\"]?)(?P<secret>[^\s'\"-][^\s'\"]*)\1"),
         _mask_group, _in_text("--password"), _at_words("--password")),
    Rule(re.compile(r"\bmachine[ \t]+\S+(?:[ \t]+(?:login|account)[ \t]+\S+)*[ \t]+password[ \t]+(?P<secret>\S+)"),
         _mask_group, _in_text("machine", "password"), _at_words("machine")),
)
