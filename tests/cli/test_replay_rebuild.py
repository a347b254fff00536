"""Replay's rebuild finds the original's handle in every stub form, the current family and earlier versions'."""

from __future__ import annotations

from stowage.command.replay.rebuild import original_handle
from stowage.context_engine.chat.stubs import PrunedOutput, default_stub, stored_stub, view_stub

ORIGINAL = "3f2a9c0d1e2b4a5f"
PREVIEW = "0123456789abcdef"
OUTPUT = PrunedOutput(3, "c1", "terminal", '{"command": "make"}', "build failed\n" * 40)


def test_a_stub_of_the_current_family_names_the_original():
    assert original_handle(stored_stub(OUTPUT, ORIGINAL)) == ("stub", ORIGINAL)
    assert original_handle(view_stub("terminal", OUTPUT.content, ORIGINAL)) == ("stub", ORIGINAL)


def test_a_stub_without_a_store_is_counted_but_names_nothing():
    assert original_handle(default_stub(OUTPUT)) == ("stub", None)
    assert original_handle(default_stub(OUTPUT._replace(duplicate_of_call_id="c9"))) == ("stub", None)


def test_stubs_of_earlier_versions_still_name_their_original():
    both = (
        f"[stowage: tool output stored] terminal() -> ok; 9 chars, 1 line; handle {PREVIEW}; "
        f"the full output is under handle {ORIGINAL} (read it with stowage_fetch)"
    )
    assert original_handle(both) == ("stub", ORIGINAL)  # the spilled original, not the stored preview
    plain = f"[stowage: tool output stored] terminal() -> ok; 9 chars, 1 line; handle {ORIGINAL} (read it ...)"
    assert original_handle(plain) == ("stub", ORIGINAL)
    view = f'[stowage: old output omitted] terminal -> ok; 9 chars; stowage_fetch(handle="{ORIGINAL}")'
    assert original_handle(view) == ("stub", ORIGINAL)
    assert original_handle("[stowage: tool output pruned] terminal() -> ok; 9 chars, 1 line") == ("stub", None)
