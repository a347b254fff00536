"""What kinds of argument values a request carries, as words a tool schema would use for them.

A question gives values, not slot names: "the forecast for Campbell on 4th
March 2023", "open https://huggingface.co", "convert 500 USD". The tool it is
meant for names the slots those values fill ("date", "url", "amount"), so a
question that carries a date should lean towards tools that take one. Each
kind of value found adds its slot words to the query at a reduced weight
(``query.query_weights``); a word the question already says keeps its own
weight.

The patterns are deliberately plain and few: each one is a value shape, not
a topic, so they carry over to any catalog.
"""

from __future__ import annotations

import re
from functools import lru_cache

_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DAY = r"(?:today|tomorrow|yesterday|tonight|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_ORDINAL = r"\d{1,2}(?:st|nd|rd|th)?"

# (value shape, slot words a schema uses for it)
_HINTS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), words)
    for pattern, words in (
        (  # 2023-03-10, 10/03/2023, March 4th, 4th of March, tomorrow, Saturday
            rf"\b\d{{4}}[-/.]\d{{1,2}}[-/.]\d{{1,2}}\b|\b\d{{1,2}}[-/.]\d{{1,2}}[-/.]\d{{2,4}}\b"
            rf"|\b{_MONTH}\s+{_ORDINAL}\b|\b{_ORDINAL}\s+(?:of\s+)?{_MONTH}|\b{_DAY}\b",
            "date",
        ),
        (r"\b\d{1,2}:\d{2}\s?(?:am|pm)?\b|\b\d{1,2}\s?(?:am|pm)\b", "time"),
        (r"\bhttps?://|\bwww\.", "url"),
        (r"\b[\w.+-]+@[\w-]+\.[\w.]+\b", "email"),
        (  # $20, 500 USD, 30 euros
            r"[$\u20ac\u00a3\u00a5]\s?\d|\b\d+(?:\.\d+)?\s?(?:usd|eur|gbp|jpy|dollars?|euros?|pounds?|yen)\b",
            "amount currency",
        ),
        (r"\b\d+(?:\.\d+)?\s?%|\bpercent", "percent"),
        (  # C:\\Users, ./src/app, report.csv
            r"(?:^|\s)(?:[a-z]:\\|\.{0,2}/[\w.-]+/)|\b[\w-]+\.(?:txt|csv|json|py|js|ts|md|pdf|png|jpe?g"
            r"|exe|bat|sh|xlsx?|docx?|log|ya?ml|xml|html?|zip)\b",
            "file path",
        ),
    )
)


@lru_cache(maxsize=4096)
def implied_slot_words(text: str) -> tuple[str, ...]:
    """Slot words implied by the values in ``text``, in a fixed order, without repeats."""
    out: list[str] = []
    for pattern, words in _HINTS:
        if pattern.search(text):
            out.extend(w for w in words.split() if w not in out)
    return tuple(out)
