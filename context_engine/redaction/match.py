"""How a redaction rule finds its matches fast: the rule type, gates and finders (replacements: :mod:`.replacements`).

A rule is a regex and a replacement, plus two accelerators that never change
the result: a ``gate`` (a necessary condition checked with substring
searches: when it fails the regex cannot match) and a ``find`` (the matches
of the regex, located from the places a match can begin instead of trying
the pattern at every character).  Python's ``re`` tries a pattern that opens
with an alternation or a lookbehind at every position of the text, which is
what made redaction the slowest step of a compaction; substring searches and
anchored matches at a handful of candidates are an order of magnitude faster.
The patterns themselves are in :mod:`.rules`.
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

    __slots__ = ("text", "lowered", "in_text", "in_lowered")

    def __init__(self, text: str) -> None:
        self.text, self.lowered = text, fold_case(text)
        self.in_text: dict[str, bool] = {}
        self.in_lowered: dict[str, bool] = {}

    def has(self, word: str) -> bool:
        """``word`` occurs in the text (case-sensitive)."""
        return _memo_contains(self.in_text, self.text, word)

    def lower_has(self, word: str) -> bool:
        """``word`` (lower case) occurs in the folded text."""
        return _memo_contains(self.in_lowered, self.lowered, word)


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


# -- gates ----------------------------------------------------------------------------------------


def always(haystack: Haystack) -> bool:
    return True


def in_text(*required: str, any_of: tuple[str, ...] = ()) -> Gate:
    """All of ``required`` and one of ``any_of`` occur in the text (case-sensitive)."""

    def gate(haystack: Haystack) -> bool:
        return all(map(haystack.has, required)) and (not any_of or any(map(haystack.has, any_of)))

    return gate


def in_lowered(*any_of: str, text_requires: tuple[str, ...] = (), any_text: tuple[str, ...] = ()) -> Gate:
    """All of ``text_requires`` and one of ``any_text`` occur in the text, and one of ``any_of`` in its lower case."""

    def gate(haystack: Haystack) -> bool:
        return (
            all(map(haystack.has, text_requires))
            and (not any_text or any(map(haystack.has, any_text)))
            and any(map(haystack.lower_has, any_of))
        )

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


def matches_at(pattern: re.Pattern[str], text: str, starts: Iterable[int]) -> Iterator[Match[str]]:
    """The matches at ``starts`` (ascending), skipping starts inside the previous match as ``re.sub`` does.

    Skipping also keeps a finder linear: a rule whose match runs to the line
    end would otherwise rescan the rest of the line from every later start.
    """
    last, covered = -1, 0
    for start in starts:
        if start != last and start >= covered:
            last = start
            match = pattern.match(text, start)
            if match:
                covered = match.end()
                yield match


def on_lowered_positions(find: Finder) -> Finder:
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
_LAST_OUTSIDE_NAME = re.compile(r"(?s).*[^a-z0-9_-]")
_NAME_RUN = re.compile(r"[a-z0-9_-]*")


def _run_starts(text: str, positions: Iterable[int], last_outside: re.Pattern[str], run: re.Pattern[str]) -> list[int]:
    """The start of the run (``run``'s characters) holding each position, once per run.

    Each start is found scanning back in C-sized steps for the last character
    outside the run (``last_outside``, ``.*`` then that character); positions
    inside a run already seen are skipped.
    """
    starts: list[int] = []
    run_end = -1
    for at in positions:
        if at < run_end:
            continue
        high, start = at, 0
        while high > 0:
            low = max(0, high - 256)
            outside = last_outside.match(text, low, high)
            if outside:
                start = outside.end()
                break
            high = low
        starts.append(start)
        run_end = max(at + 1, run.match(text, at).end())  # type: ignore[union-attr]  # a * pattern always matches
    return starts


def at_identifier_holding(*words: str) -> Finder:
    """Matches that begin at the start of an identifier containing one of ``words`` (case-sensitive)."""

    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        text = haystack.text
        positions = occurrences(text, [word for word in words if haystack.has(word)])
        return matches_at(pattern, text, _run_starts(text, positions, _LAST_NON_WORD, _WORD_RUN))

    return find


def at_name_holding(*words: str) -> Finder:
    """Matches that begin where a ``[A-Za-z0-9_-]`` run (a header name) holding one of ``words`` begins.

    ``words`` are lower case and searched in the folded text, so ``X-Vault-Token``
    is found from its ``-token``.
    """

    @on_lowered_positions
    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        lowered = haystack.lowered
        positions = occurrences(lowered, [word for word in words if haystack.lower_has(word)])
        return matches_at(pattern, haystack.text, _run_starts(lowered, positions, _LAST_OUTSIDE_NAME, _NAME_RUN))

    return find


def runs_of(chars: str, min_length: int) -> Callable[[str], Iterator[tuple[int, int]]]:
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
        self._char += len(self._data[self._byte : offset].decode("utf-8", "surrogatepass"))
        self._byte = offset
        return self._char


def _candidates(text: str, start: int, end: int, boundaries: str) -> list[int]:
    """Where a match may begin in ``text[start:end]``: the run's start and just after each boundary mark, in order."""
    candidates = [start]
    for mark in boundaries:
        at = text.find(mark, start, end)
        while at != -1:
            candidates.append(at + 1)
            at = text.find(mark, at + 1, end)
    if len(candidates) > 1:
        candidates.sort()
    return candidates


def in_runs(runs: Callable[[str], Iterator[tuple[int, int]]], heads: tuple[str, ...], boundaries: str) -> Finder:
    """Matches inside the runs (the pattern's characters are all in the run's class).

    A match begins where the run begins or just after one of ``boundaries``
    (run characters the pattern's lookbehind allows before a match), and
    with one of ``heads`` (the literal start of each alternative): a
    ``startswith`` test drops the other places before any regex runs.
    """

    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterator[Match[str]]:
        text = haystack.text
        for start, end in runs(text):
            candidates = _candidates(text, start, end, boundaries)
            matched_to = start
            for at in candidates:
                if at >= matched_to and text.startswith(heads, at, end):
                    match = pattern.match(text, at, end)
                    if match:
                        matched_to = match.end()
                        yield match

    return find


def in_runs_by_head(
    runs: Callable[[str], Iterator[tuple[int, int]]], alternatives: tuple[str, ...], before: str, after: str
) -> Finder:
    """:func:`in_runs` for ``before (?:alt1|alt2|...) after``, trying only the alternatives a place starts with.

    ``re`` tries an alternation's branches one by one at each candidate; with a
    hundred vendor prefixes most of the time went there.  Each alternative is
    compiled on its own (with the same ``before`` and ``after``), and at each
    candidate only those whose literal head the text starts with are tried,
    in the alternation's order: the first that matches is the alternation's match.
    """
    compiled = [(literal_head(alt), re.compile(before + "(?:" + alt + ")" + after)) for alt in alternatives]
    by_two: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
    by_one: dict[str, list[tuple[str, re.Pattern[str]]]] = {}  # one-letter heads (Vault's legacy "s.")
    for head, pattern in compiled:
        (by_one if len(head) == 1 else by_two).setdefault(head[:2], []).append((head, pattern))
    order = {id(pattern): index for index, (_head, pattern) in enumerate(compiled)}
    boundaries = ".=-"

    def merged(at_two: str) -> list[tuple[str, re.Pattern[str]]]:
        """The alternatives a place starting with ``at_two`` may begin, in the alternation's order."""
        tried = [*by_two.get(at_two, ()), *by_one.get(at_two[:1], ())]
        return sorted(tried, key=lambda item: order[id(item[1])])

    cache: dict[str, list[tuple[str, re.Pattern[str]]]] = {}

    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterator[Match[str]]:
        text = haystack.text
        for start, end in runs(text):
            candidates = _candidates(text, start, end, boundaries)
            matched_to = start
            for at in candidates:
                if at < matched_to:
                    continue
                two = text[at : at + 2]
                tried = cache.get(two)
                if tried is None:
                    tried = cache[two] = merged(two)
                for head, alternative in tried:
                    if text.startswith(head, at, end):
                        match = alternative.match(text, at, end)
                        if match:
                            matched_to = match.end()
                            yield match
                            break

    return find


def literal_head(alternative: str) -> str:
    """The literal characters an alternative of a pattern starts with (``"ya29"`` for ``ya29\\.[A-Z]+``)."""
    head = re.match(r"[A-Za-z0-9_-]*", alternative).group()  # type: ignore[union-attr]  # a * pattern always matches
    if head and alternative[len(head) : len(head) + 1] in ("?", "*", "{"):
        head = head[:-1]  # the last character is optional
    if not head:
        raise ValueError(f"no literal start in the pattern alternative {alternative!r}")
    return head


def prefiltered(prefilter: str) -> Finder:
    """Matches that begin where ``prefilter`` matches in the lower-cased text.

    The prefilter is the pattern's opening part without ``(?i)``: on
    lower-cased text ``re`` scans it several times faster (a case-sensitive
    literal or class prefix lets it skip ahead).  It must match at every
    position a real match begins, and no real match may begin inside one of
    its matches (each use below says why).
    """
    compiled = re.compile(prefilter)

    @on_lowered_positions
    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        return matches_at(pattern, haystack.text, (m.start() for m in compiled.finditer(haystack.lowered)))

    return find


def at_words_before_space(*words: str) -> Finder:
    """Matches that begin at one of ``words`` followed by whitespace (found with ``str.find``)."""

    @on_lowered_positions
    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        lowered = haystack.lowered
        end = len(lowered)
        starts = [
            at
            for word in words
            if haystack.lower_has(word)
            for at in occurrences(lowered, (word,))
            if at + len(word) < end and lowered[at + len(word)].isspace()
        ]
        starts.sort()
        return matches_at(pattern, haystack.text, starts)

    return find


_KEY_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_.-"


def at_line_key(*parts: str) -> Finder:
    """Matches that begin at the start of a line whose leading key (after indentation) holds one of ``parts``.

    From the first occurrence of a part in a line (``str.find``), the line
    is a candidate when everything between its start and the part is
    indentation, dashes and key characters: prose lines, where a space comes
    first, drop out without a regex.  The search then goes on at the next
    line: a later occurrence in the same line has the same verdict (its
    prefix holds the earlier one's, and a character that is neither
    indentation nor a key's stays in it).
    """

    @on_lowered_positions
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
        return matches_at(pattern, haystack.text, sorted(starts))

    return find


def key_before(mark: str, starts: tuple[str, ...], reach: int) -> Finder:
    """Matches of ``<key holding a start word> <whitespace> mark``, found from each ``mark`` back.

    ``reach`` bounds how far before the whitespace a match can begin (the
    longest secret word with its longest suffix).
    """

    @on_lowered_positions
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
        return matches_at(pattern, text, sorted(found))

    return find


def before_mark(mark: str, widths: tuple[int, ...], run: re.Pattern[str] | None = None) -> Finder:
    """Matches that begin one of ``widths`` characters before each ``mark`` (the pattern pins the start).

    With ``run``, only where those characters are one run of it (no scan with a lookbehind).
    """

    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        text = haystack.text
        starts = {
            at - width
            for at in occurrences(text, (mark,))
            for width in widths
            if at >= width and (run is None or run.fullmatch(text, at - width, at))
        }
        return matches_at(pattern, text, sorted(starts))

    return find


def after_digits(count: int, mark: str) -> Finder:
    """Matches that begin at ``mark`` right after ``count`` digits (no scan with a lookbehind)."""

    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        text = haystack.text
        starts = [at for at in occurrences(text, (mark,)) if at >= count and text[at - count : at].isdecimal()]
        return matches_at(pattern, text, starts)

    return find


def at_words(*words: str) -> Finder:
    """Matches that begin where one of ``words`` occurs in the text (case-sensitive)."""

    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        return matches_at(pattern, haystack.text, occurrences(haystack.text, [w for w in words if haystack.has(w)]))

    return find


def at_commands(head: str, *words: str) -> Finder:
    """Matches of ``<command> [^\\n]*? <flag> <value>`` from each command word, trying each line once.

    ``head`` is the command part of the pattern.  When the whole pattern
    fails where ``head`` matched, every later start on that line fails too
    (it would search the same rest of the line for the same flag), so the
    line is skipped: hundreds of ``mysql`` words on one line cost one scan of
    it, not one each.
    """
    command = re.compile(head)

    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterator[Match[str]]:
        text = haystack.text
        covered = skip_to = 0
        for at in occurrences(text, [word for word in words if haystack.has(word)]):
            if at < covered or at < skip_to:
                continue
            match = pattern.match(text, at)
            if match:
                covered = match.end()
                yield match
            elif command.match(text, at):
                line_end = text.find("\n", at)
                skip_to = len(text) if line_end == -1 else line_end

    return find


def command_rule(head: str, tail: str, replace: Replace, gate: Gate, *words: str) -> Rule:
    """A rule for ``head + tail`` found with :func:`at_commands` from ``words``.

    :func:`at_commands` skips a line when ``head`` matched where the whole
    pattern did not, which is right only if ``head`` is how the pattern
    begins; taking both from one string keeps them the same.
    """
    return Rule(re.compile(head + tail), replace, gate, at_commands(head, *words))


def at_lowered_words(*words: str) -> Finder:
    """Matches that begin where one of ``words`` (lower case) occurs in the folded text."""

    @on_lowered_positions
    def find(pattern: re.Pattern[str], haystack: Haystack) -> Iterable[Match[str]]:
        return matches_at(
            pattern, haystack.text, occurrences(haystack.lowered, [w for w in words if haystack.lower_has(w)])
        )

    return find
