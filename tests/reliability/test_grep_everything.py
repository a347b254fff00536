"""``stowage_grep`` searches everything the session stored, or says exactly what is left.

The attack: a long session stores more than 500 items; the search listed only
the 500 most recently used and answered "searched 500 of 500", so an early
traceback was unfindable though stored.  Now every item is searched newest
first; a call stopped by its time bound or by ``max_results`` says how many
items remain and gives a cursor that continues exactly where it stopped.
"""

from __future__ import annotations

import json

import pytest

from stowage.blobstore import BlobStore
from stowage.context_engine.store_session.fetch_tools import GREP, FetchLimits, FetchTools
from stowage_dev.clock import ManualClock

pytestmark = pytest.mark.reliability
ITEMS = 620
EARLY = "Traceback (most recent call last): EARLY-BUG-7731"


@pytest.fixture(scope="module")
def session_store(tmp_path_factory):
    """One session that stored ITEMS outputs, the first of them the early traceback; another session's too."""
    clock = ManualClock()
    store = BlobStore(tmp_path_factory.mktemp("grep") / "store", clock=clock)
    store.mark_session_live("long")
    for i in range(ITEMS):
        text = f"output {i}\n" + (EARLY if i == 0 else f"step {i} ok") + "\nmatch-me line\n"
        store.put(text.encode(), session_id="long", tool_name="terminal", kind="output")
        clock.advance(1.0)
    for i in range(3):  # a foreign session's match is never searched nor counted
        store.put(f"{EARLY} foreign {i}".encode(), session_id="other", tool_name="terminal", kind="output")
    store.put(b"\x89PNG\r\n\x1a\n" + bytes(range(256)), session_id="long", tool_name="image", kind="part")
    return store


def grep(store: BlobStore, limits: FetchLimits | None = None, **args) -> dict:
    return json.loads(FetchTools(store, lambda: "long", limits or FetchLimits()).handle(GREP, args))


def test_an_early_item_of_a_long_session_is_found(session_store, figures):
    reply = grep(session_store, pattern="EARLY-BUG-7731")
    figures.update(stored=ITEMS, searched=reply["searched"], of=reply["of"], found=len(reply["results"]))
    assert reply["of"] == ITEMS and reply["searched"] == ITEMS and reply["remaining"] == 0
    assert [r["matches"] for r in reply["results"]] == [1] and EARLY in reply["results"][0]["text"]
    assert "next_cursor" not in reply and "note" not in reply
    assert reply["binary_not_searched"] == 1


def test_a_call_stopped_by_max_results_says_how_many_remain_and_continues(session_store):
    first = grep(session_store, pattern="match-me", max_results=5)
    assert len(first["results"]) == 5 and first["stopped"] == "max_results"
    assert first["searched"] == 5 and first["remaining"] == ITEMS - 5
    assert f"{ITEMS - 5:,} older items are not searched yet" in first["note"]
    assert first["next_cursor"] in first["note"]
    second = grep(session_store, pattern="match-me", max_results=5, cursor=first["next_cursor"])
    assert second["searched_before"] == 5 and second["searched"] == 5 and second["remaining"] == ITEMS - 10
    handles = {r["handle"] for r in first["results"]} | {r["handle"] for r in second["results"]}
    assert len(handles) == 10  # no item twice, none skipped


def test_paging_by_the_time_bound_covers_every_item_exactly_once(session_store, figures):
    limits = FetchLimits(grep_time_budget_s=0.02)  # far too little for 620 items: many calls
    seen: list[str] = []
    cut: list[str] = []
    cursor, calls = None, 0
    while True:
        reply = grep(session_store, limits, pattern="output [0-9]+", max_results=200, cursor=cursor)
        calls += 1
        assert reply.get("searched_before", 0) + reply["searched"] + reply["remaining"] == reply["of"] == ITEMS
        seen += [r["handle"] for r in reply["results"]]
        if "incomplete" in reply:  # a loaded machine: one item alone outlasted the bound, and the reply names it
            cut.append(reply["incomplete"]["handle"])
        if not reply["remaining"]:
            assert "next_cursor" not in reply
            break
        # the time bound, or (200 results of every item) the reply's size: what did not fit is searched next time
        assert reply["stopped"] in ("time_budget", "reply_size") and reply["searched"] >= 1
        bound = "0.02 s time bound" if reply["stopped"] == "time_budget" else "the reply's size bound"
        assert bound in reply["note"] and reply["next_cursor"] in reply["note"]
        cursor = reply["next_cursor"]
        assert calls < ITEMS + 1
    figures.update(items=ITEMS, calls=calls, found=len(seen), named_incomplete=len(cut))
    assert calls > 1 and len(seen) == len(set(seen)) and len(set(seen) | set(cut)) == ITEMS


def test_a_cursor_no_reply_gave_is_a_clear_error(session_store):
    for bad in ("nonsense", "12:zz", 12, ["1:abc"], "1.5:" + "a" * 10):
        reply = grep(session_store, pattern="x", cursor=bad)
        assert "next_cursor string of an earlier stowage_grep reply" in reply["error"]


def test_an_item_that_alone_outlasts_the_time_bound_is_named_and_the_search_moves_on(tmp_path):
    clock = ManualClock()
    store = BlobStore(tmp_path / "store", clock=clock)
    for i in range(3):
        store.put(f"small {i}\nneedle here\n".encode(), session_id="long", kind="output")
        clock.advance(1)
    # ~6.6 MB, newest; its one match is its last line, so the match cap never stops the scan before the time bound
    big = ("".join(f"{i:07d} hay in a very long log\n" for i in range(200_000)) + "needle at the end\n").encode()
    big_handle = store.put(big, session_id="long", kind="spill").handle
    limits = FetchLimits(grep_time_budget_s=0.01)
    pattern = "(?<!x)needle"  # a lookbehind: no batch prefilter, every line is grepped in turn (slow on purpose)
    first = grep(store, limits, pattern=pattern, max_results=200)
    assert first["searched"] == 1 and first["remaining"] == 3 and first["stopped"] == "time_budget"
    assert first["incomplete"]["handle"] == big_handle and first["incomplete"]["scanned_lines"] < 200_000
    assert f'stowage_fetch(handle="{big_handle}", mode="grep")' in first["note"]
    rest = grep(store, limits, pattern=pattern, max_results=200, cursor=first["next_cursor"])
    while rest["remaining"]:
        rest = grep(store, limits, pattern=pattern, max_results=200, cursor=rest["next_cursor"])
    assert rest["searched_before"] + rest["searched"] == rest["of"] == 4


def test_kind_spill_takes_the_unescaped_views_too(session_store):
    store = session_store
    handle = store.put(b"spill body\nVIEW-ONLY-77\n", session_id="long", kind="spill-view").handle
    reply = grep(store, pattern="VIEW-ONLY-77", kind="spill")
    assert [r["handle"] for r in reply["results"]] == [handle] and reply["of"] == 1
