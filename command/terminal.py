"""Text safe to print on a terminal: no control or escape sequence survives.

Summaries, tool outputs, session titles and error messages are text the
model or a tool wrote.  Printed as is, an escape sequence in them acts on the
user's terminal: OSC 52 sets the clipboard, OSC 8 hides a link target, CSI
sequences move the cursor or clear lines and can make a printed block lie
about what it holds.  Every command that prints such text passes it through
:func:`safe_text`, which drops whole sequences (so no stray payload is left
either) and every other C0/C1 control character except tab and newline.
"""

from __future__ import annotations

import re

# ESC-introduced (7-bit) and C1 (8-bit) sequences, matched whole:
#  * OSC / DCS / SOS / PM / APC strings run to BEL or ST (ESC \ or U+009C), or to the end of the text;
#  * CSI: parameter and intermediate bytes, then one final byte;
#  * any other ESC plus one character (ESC 7, ESC c, ESC ( B ...).
_SEQUENCE = re.compile(
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c|(?=\x1b)|$)"
    r"|(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"
)
# What is left: C0 controls but tab and newline, DEL, C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def safe_text(text: str) -> str:
    """``text`` without escape sequences or control characters (tab and newline kept; CRLF becomes LF)."""
    if not text:
        return text
    text = text.replace("\r\n", "\n")
    return _CONTROL.sub("", _SEQUENCE.sub("", text))
