"""Static size estimate of a regex, to refuse compile-time bombs.

The ``regex`` module's match timeout does not cover *compiling*: counted
repeats are expanded, so a 25-character pattern such as
``((a{1000}){1000}){1000}`` keeps ``compile`` busy (holding the GIL) for
minutes.  This estimate multiplies nested repeat bounds without compiling; it
over-estimates on purpose (group syntax, flags and comments count as atoms),
which is the safe direction.
"""

from __future__ import annotations

import re

__all__ = ["estimate_expansion"]

_QUANT = re.compile(r"\{\s*(\d*)\s*(,?)\s*(\d*)\s*\}")
_BRACED_ESCAPES = "xupPNgk"  # \x{..}, \p{..}, \N{..}, \g<..>, \k<..> take a payload


def _skip_escape(p: str, i: int) -> int:
    """Index after the escape sequence starting at ``p[i] == '\\\\'``."""
    if i + 1 >= len(p):
        return len(p)
    c = p[i + 1]
    if c in _BRACED_ESCAPES and i + 2 < len(p) and p[i + 2] in "{<":
        close = "}" if p[i + 2] == "{" else ">"
        j = p.find(close, i + 3)
        return len(p) if j < 0 else j + 1
    return i + 2


def _skip_class(p: str, i: int) -> int:
    """Index after the character class starting at ``p[i] == '['``; nested sets allowed."""
    depth = 0
    j = i
    n = len(p)
    while j < n:
        c = p[j]
        if c == "\\":
            j = _skip_escape(p, j)
            continue
        if c == "[":
            depth += 1
            j += 1
            if j < n and p[j] == "^":
                j += 1
            if j < n and p[j] == "]":  # a leading ']' is literal
                j += 1
            continue
        if c == "]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return n


def estimate_expansion(pattern: str) -> int:
    """Rough number of compiled nodes: atoms times their (nested) repeat bounds."""
    frames: list[list[int]] = [[0]]  # per open group: running size of each alternative
    last_atom = 0
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        atom = -1
        if c == "\\":
            i = _skip_escape(pattern, i)
            atom = 1
        elif c == "[":
            i = _skip_class(pattern, i)
            atom = 1
        elif c == "(":
            frames.append([0])
            i += 1
            last_atom = 0
            continue
        elif c == ")":
            inner = sum(frames.pop()) if len(frames) > 1 else 0
            i += 1
            atom = max(1, inner)
        elif c == "|":
            frames[-1].append(0)
            i += 1
            last_atom = 0
            continue
        elif c == "{":
            m = _QUANT.match(pattern, i)
            if m and (m.group(1) or m.group(3)):
                lo = int(m.group(1) or 0)
                hi = int(m.group(3) or 0) if m.group(2) else lo
                frames[-1][-1] += last_atom * max(0, max(lo, hi) - 1)
                last_atom *= max(1, lo, hi)
                i = m.end()
                continue
            i += 1
            atom = 1
        elif c in "*+?":
            i += 1
            continue
        else:
            i += 1
            atom = 1
        frames[-1][-1] += atom
        last_atom = atom
    while len(frames) > 1:  # unbalanced: count what is open (compile will reject it anyway)
        inner = sum(frames.pop())
        frames[-1][-1] += inner
    return sum(frames[0])
