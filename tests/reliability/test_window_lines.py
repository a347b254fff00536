"""Stored windows decode exactly, whatever line separators the messages hold."""

from __future__ import annotations

import pytest

from stowage.context_engine.store_session.archive import decode_window, encode_window

pytestmark = pytest.mark.reliability

SEPARATORS = ["\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\r", "\r\n"]


def test_windows_with_unicode_line_separators_round_trip(figures):
    messages = [
        {"role": "tool", "tool_call_id": f"c{i}", "content": f"before{sep}after{sep}"}
        for i, sep in enumerate(SEPARATORS)
    ]
    messages.append({"role": "user", "content": "".join(SEPARATORS)})
    decoded = decode_window(encode_window(messages))
    figures.update(separators=len(SEPARATORS), messages=len(messages), equal=decoded == messages)
    assert decoded == messages
