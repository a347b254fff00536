"""What a search query asks for: its terms, each with a weight.

Questions carry argument values as well as intent: "book a room for 3
nights", "remove the task 'ravi' from my todo list". The values (numbers,
quoted strings) match tools whose *names* happen to contain them (``Hotels_4_``,
a tool about "ravi") and pull those above the tool the question is about. They
keep a reduced weight rather than none: "s3" or "oauth 2" can be the point.

Scripts other than Latin are kept (descriptions are not all English); whether
such a query *can* match is decided by the index, which answers "nothing
matched" instead of guessing by closeness of spelling.
"""

from __future__ import annotations

import re

from .tokens import normalize, split_words, tokenize
from .value_hints import implied_slot_words

# Weight of a term that only occurs as an argument-like value. Chosen on BFCL
# (bench/bench_tool_search.py): 0.5 gained ~1 point of recall@5 over 1.0; 0.3 lost it again.
ARGUMENT_WEIGHT = 0.5
# Weight of a slot word implied by a value's shape ("date" for "March 4th"), see
# ``value_hints``. Chosen on the bench's tuning half (split A): 0.2 -> 0.7 -> 1.0
# gave +0.0 / +0.0 points of recall@5 there and +0.4 / +0.9 on the held-out half.
IMPLIED_WEIGHT = 0.7

# A quoted span: the quote must open after a non-word character and close
# before one, so apostrophes ("I'm", "they're") never open a span.
_QUOTED_RE = re.compile(r"(?<!\w)(['\"\u2018\u201c])(.+?)(['\"\u2019\u201d])(?!\w)")
_LATIN_OR_DIGIT_RE = re.compile(r"[A-Za-z0-9]")


def query_weights(query: str) -> dict[str, float]:
    """Distinct normalized terms of ``query`` with their weights, in query order.

    Terms seen only inside quotes, and digit-only terms, weigh ``ARGUMENT_WEIGHT``;
    slot words implied by the shape of a value (a date, a URL, an amount) weigh
    ``IMPLIED_WEIGHT`` unless the query says them itself; every other term 1.0.
    A query of stopwords only keeps them (weight 1.0), so "get all" still finds
    ``get_all``.
    """
    outside = _QUOTED_RE.sub(" ", query)
    free = tokenize(outside)
    weights: dict[str, float] = {}
    for term in free:
        weights.setdefault(term, ARGUMENT_WEIGHT if term.isdigit() else 1.0)
    for match in _QUOTED_RE.finditer(query):
        for term in tokenize(match.group(2)):
            weights.setdefault(term, ARGUMENT_WEIGHT)
    if weights:
        for word in implied_slot_words(query):
            weights.setdefault(normalize(word), IMPLIED_WEIGHT)
    if not weights:
        for term in (normalize(t) for t in split_words(query)):
            weights.setdefault(term, 1.0)
    return weights


def has_latin(query: str) -> bool:
    """Whether the query has a Latin letter or digit, i.e. could be (part of) a tool name."""
    return bool(_LATIN_OR_DIGIT_RE.search(query))
