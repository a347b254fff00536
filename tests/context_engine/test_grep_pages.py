"""The cursor that continues a ``stowage_grep`` through a session's stored items."""

from __future__ import annotations

import pytest

from stowage.blobstore import BlobStore, CatalogEntry
from stowage.context_engine.store_session.grep_pages import CursorError, cursor_after, page, parse_cursor
from stowage_dev.clock import ManualClock


def entry(at: float, sha: str) -> CatalogEntry:
    return CatalogEntry(sha * 64 if len(sha) == 1 else sha, at, 10, True, "text", "output", "terminal")


ENTRIES = [entry(5.0, "e"), entry(4.0, "d"), entry(4.0, "c"), entry(2.5, "b"), entry(1.0, "a")]  # newest first


def test_a_cursor_round_trips_and_continues_right_after_its_item():
    for position, item in enumerate(ENTRIES):
        cursor = parse_cursor(str(cursor_after(item)))
        rest = page(ENTRIES, cursor)
        assert rest.done == position + 1 and list(rest.todo) == ENTRIES[position + 1 :]
    assert page(ENTRIES, None).done == 0 and list(page(ENTRIES, None).todo) == ENTRIES


def test_items_stored_or_evicted_between_calls_never_make_a_continuation_skip_one():
    cursor = cursor_after(ENTRIES[2])  # searched e, d, c
    later = [entry(9.0, "f"), *ENTRIES[:1], *ENTRIES[3:]]  # f stored since; d and c evicted
    rest = page(later, parse_cursor(str(cursor)))
    assert [e.sha256[0] for e in rest.todo] == ["b", "a"] and rest.done == 2


@pytest.mark.parametrize(
    "bad", ["x", "1.0:zz", "1.0:" + "a" * 15, ":" + "a" * 16, "-1:" + "a" * 16, 7, ["1"], "9" * 200]
)
def test_anything_else_is_refused(bad):
    with pytest.raises(CursorError):
        parse_cursor(bad)


def test_the_store_catalog_lists_what_a_session_can_read_newest_first(tmp_path):
    clock = ManualClock()
    store = BlobStore(tmp_path / "store", clock=clock)
    shas = []
    for i in range(3):
        shas.append(store.put(f"mine {i}".encode(), session_id="s", tool_name="t", kind="output").sha256)
        clock.advance(1)
    store.put(b"theirs", session_id="other", kind="spill")
    granted = store.put(b"granted", session_id="other", kind="spill").sha256
    store.grant(granted, "s")
    catalog = store.catalog("s")
    assert [e.sha256 for e in catalog] == [granted, *reversed(shas)]
    assert [e.kind for e in catalog] == ["spill", "output", "output", "output"] and catalog[1].tool_name == "t"
