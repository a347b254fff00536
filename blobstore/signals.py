"""Line signals: which lines of command output deserve a place in a preview.

A head-only preview loses the part of a log that matters (the failure is
usually in the middle or at the end), so the excerpt builder scans the whole
text for lines that look like errors, and sniffing uses the same vocabulary to
tell logs from prose.  The patterns are ours and fixed (never user-supplied),
so the stdlib ``re`` is safe here; they avoid nested quantifiers.
"""

from __future__ import annotations

import re

__all__ = [
    "ERROR_RE",
    "WARNING_RE",
    "SIGNAL_RE",
    "LOGISH_RE",
    "signal_level",
]

# Strong signals: a failure is being reported.  Case-insensitive words plus a
# few case-sensitive shapes (pytest "E   " lines, CamelCase exception names).
_ERROR_WORDS = (
    r"\berrors?\b|\berr!|\bexceptions?\b|\btraceback\b|\bfail(?:ed|ure|ures|s)?\b"
    r"|\bfatal\b|\bpanic(?:ked)?\b|\bassert(?:ion)?(?:error)?\b|\bsegmentation fault\b"
    r"|\bcore dumped\b|\bpermission denied\b|\bundefined reference\b|\bunhandled\b"
    r"|\bnot found\b|\bno such file\b|\bkilled\b|\bout of memory\b|\babort(?:ed)?\b"
    r"|\bexit(?:ed)?(?: with)? (?:code|status)[ :=]*[1-9]\d*"
    r"|\breturned non-zero\b|\bnon-zero exit\b|\"exit_code\": *[1-9]\d*"
)
_ERROR_SHAPES = r"(?-i:^E {3}|^FAIL\b|^FAILED\b|\b[A-Z]\w*(?:Error|Exception)\b)"
ERROR_RE = re.compile(rf"(?i:{_ERROR_WORDS})|{_ERROR_SHAPES}", re.MULTILINE)

# Weak signals: worth showing if room is left after the errors.
WARNING_RE = re.compile(r"(?i:\bwarn(?:ing|ings|s)?\b|\bdeprecat\w*)", re.MULTILINE)

# One pass over a large text finds either kind; the line is then classified.
SIGNAL_RE = re.compile(
    rf"(?i:{_ERROR_WORDS}|\bwarn(?:ing|ings|s)?\b|\bdeprecat\w*)|{_ERROR_SHAPES}",
    re.MULTILINE,
)

# Lines that look machine-produced: timestamps, levels, stack frames, prompts,
# compiler diagnostics, test-runner banners, ANSI colour codes.
LOGISH_RE = re.compile(
    r"^\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d"  # ISO timestamp
    r"|^\[?\d\d:\d\d:\d\d"  # clock time
    r"|\b(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL)\b"
    r"|^\s+at [\w.$<>]+\("  # JVM / JS stack frame
    r"|^  File \".*\", line \d+"  # Python stack frame
    r"|^Traceback \(most recent call last\)"
    r"|^[$#>] \S"  # shell prompt
    r"|^[\w./\\-]+:\d+(?::\d+)?: "  # path:line: diagnostic
    r"|^={3,} .* ={3,}$|^-{3,} .* -{3,}$"  # test-runner banners
    r"|^(?:PASS|FAIL|FAILED|ok|OK|ERROR|SKIP)\b"
    r"|\x1b\[[0-9;]*m"  # ANSI colour
    r"|^npm (?:ERR|WARN)|^warning: |^error(?:\[\w+\])?: "
    r"|^\s*\d+(?:\.\d+)?%\s*\|"  # progress bars
)


def signal_level(line: str) -> int:
    """2 for an error-looking line, 1 for a warning, 0 otherwise."""
    if ERROR_RE.search(line):
        return 2
    if WARNING_RE.search(line):
        return 1
    return 0
