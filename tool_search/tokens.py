"""Tokenizing for tool search: identifiers, prose, light normalization.

Tool names are identifiers (``mcp__github__create_issue``, ``getUserInfo``,
``math.factorial``, ``s3-put-object``), while queries are prose. Both must end
up in the same token space, so identifiers are split on every boundary a human
would see as a word break, and every token goes through one normalizer.

Named ``tokens`` rather than ``tokenize`` so the module can never shadow the
standard library's ``tokenize`` when this folder lands on ``sys.path``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .stemmer import stem

MCP_PREFIX = "mcp"

# Words that carry no retrieval signal in tool descriptions or user requests.
# Deliberately small: verbs such as "get", "list", "search" stay, since they
# distinguish tools.
STOPWORDS: frozenset[str] = frozenset(
    """
    a an the of to for in on at by with from into onto as and or nor but if
    then than so such that this these those there here it its is are was were
    be been being am do does did done has have had having i me my we our you
    your he she they them their his her which who whom whose what when where
    why how all any each some can could would should will shall may might must
    please want need like just also very too not no yes about over under
    up down out via per using use used e g ie eg etc let s
    """.split()
)

# camelCase / PascalCase / acronym / digit runs inside one alphanumeric word.
_SUBWORD_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# Letters and digits of any script: tool descriptions and requests are not all English.
_WORD_RE = re.compile(r"[^\W_]+")
_NON_ALNUM_RE = re.compile(r"[\W_]+")
# Han, kana and hangul are written without spaces; overlapping character pairs
# stand in for words so such text can still match.
_ORDINAL_ENDINGS = frozenset({"st", "nd", "rd", "th"})
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def normalize(token: str) -> str:
    """Reduce a lowercase token to its stem so plurals and verb forms meet.

    Snowball English (see ``stemmer``): "issues"/"issue", "creating"/"create",
    "movies"/"movie" collide; queries and documents are stemmed the same way.
    """
    return stem(token)


def split_words(text: str) -> list[str]:
    """Split text into lowercase subwords on case, digit and symbol boundaries."""
    out: list[str] = []
    for word in _WORD_RE.findall(text):
        out.extend(_subwords(word))
    return out


@lru_cache(maxsize=131072)
def _subwords(word: str) -> tuple[str, ...]:
    """Subwords of one alphanumeric run; cached because vocabularies repeat a lot."""
    if word.isascii():
        if word.islower() and word.isalpha():
            return (word,)
    elif _CJK_RE.search(word):
        return _cjk_bigrams(word)
    else:
        return (word.lower(),)
    parts = [p.lower() for p in _SUBWORD_RE.findall(word)]
    if len(parts) <= 1:
        return tuple(parts) or (word.lower(),)
    for i in range(1, len(parts)):
        if parts[i].isdigit() and not parts[i - 1].isdigit():
            # Keep "s3" or "oauth2" joined as well as split, so either form matches.
            parts.append(parts[i - 1] + parts[i])
    # "25th", "1st": the ordinal ending is not a word ("th" matched nothing useful).
    return tuple(p for i, p in enumerate(parts) if not (p in _ORDINAL_ENDINGS and i and parts[i - 1].isdigit()))


def _cjk_bigrams(word: str) -> tuple[str, ...]:
    low = word.lower()
    if len(low) == 1:
        return (low,)
    return tuple(low[i : i + 2] for i in range(len(low) - 1))


@lru_cache(maxsize=131072)
def _word_terms(word: str) -> tuple[str, ...]:
    return tuple(normalize(w) for w in _subwords(word) if w not in STOPWORDS)


def tokenize(text: str) -> list[str]:
    """Tokens of free text (descriptions, queries): split, drop stopwords, stem."""
    out: list[str] = []
    for word in _WORD_RE.findall(text):
        out.extend(_word_terms(word))
    return out


def split_tool_name(name: str) -> tuple[str, str]:
    """Split ``mcp__server__tool`` (or 0.17.0's ``mcp_server_tool``) into (server, tool); others have no server.

    Hermes registers MCP tools as ``mcp__<server>__<tool>``; the server part is
    a weak signal (it is shared by every tool of that server), so callers index
    it in a separate, lower-weight field.
    """
    if name.startswith("mcp__"):
        rest = name[5:]
        server, sep, tool = rest.partition("__")
        if sep and tool:
            return server, tool
    elif name.startswith("mcp_"):
        # hermes-agent 0.17.0 names MCP tools ``mcp_<server>_<tool>``; a server
        # with ``_`` in its name cannot be told apart, so its first word is it
        server, sep, tool = name[4:].partition("_")
        if server and sep and tool:
            return server, tool
    return "", name


def name_tokens(name: str) -> tuple[list[str], list[str]]:
    """(tool-part tokens, server tokens) of a tool name, normalized.

    Stopwords are kept in names: a tool called ``get_all`` should still match
    "all" when asked by name.
    """
    server, tool = split_tool_name(name)
    tool_toks = [normalize(w) for w in split_words(tool)]
    server_toks = [normalize(w) for w in split_words(server) if w != MCP_PREFIX]
    return tool_toks, server_toks


def name_key(text: str) -> str:
    """Separator- and case-insensitive key: ``Create-Issue`` == ``create_issue``."""
    return _NON_ALNUM_RE.sub("", text.lower())


def trigrams(key: str) -> set[str]:
    """Character trigrams of a key, padded so short keys still get some."""
    padded = f"^{key}$"
    if len(padded) < 3:
        return {padded}
    return {padded[i : i + 3] for i in range(len(padded) - 2)}
