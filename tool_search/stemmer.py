"""English stemming for tool search: Snowball (the ``snowballstemmer`` package).

Queries and tool texts must meet on one stem ("movies"/"movie",
"creating"/"create", "queries"/"query"). Snowball English (Porter2) is the
stemmer Hermes's own tool search adopted and a well-tested reference, so the
two rank the same words the same way. It is pure Python and cached per word.

When the package is missing (a checkout linked as a user plugin without its
dependencies), a few suffix rules stand in, so search still works, only with
more stemmer splits.
"""

from __future__ import annotations

from functools import lru_cache

try:  # a declared dependency; the fallback only covers bare checkouts
    import snowballstemmer as _snowball
except ImportError:  # pragma: no cover - exercised only without the dependency
    _snowball = None

_STEMMER = _snowball.stemmer("english") if _snowball is not None else None
ENGINE = "snowball-english" if _STEMMER is not None else "suffix-rules"


@lru_cache(maxsize=65536)
def stem(token: str) -> str:
    """The stem of one lowercase token; digits and very short words are kept as they are."""
    if len(token) <= 2 or token.isdigit():
        return token
    if _STEMMER is not None and token.isascii():
        return _STEMMER.stemWord(token)
    return _suffix_stem(token) if token.isascii() else token


def _suffix_stem(t: str) -> str:
    """A crude stand-in for Snowball: plural and -ing/-ed endings only."""
    n = len(t)
    if n <= 3:
        return t
    if t.endswith("ies") and n > 4:
        return t[:-3] + "y"
    if t.endswith(("sses", "ches", "shes", "xes", "zes")):
        return t[:-2]
    if t.endswith("s") and not t.endswith(("ss", "us", "is", "os")):
        return t[:-1]
    for suffix in ("ing", "ed"):
        if t.endswith(suffix) and n > len(suffix) + 2 and any(c in "aeiouy" for c in t[: -len(suffix)]):
            return t[: -len(suffix)]
    return t
