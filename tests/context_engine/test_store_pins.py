"""What a session asks the size cap to spare: its last request, and its two newest tool batches."""

from __future__ import annotations

import hashlib
import json

from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.store_session.pins import HANDLE_REF
from stowage.context_engine.store_session.session import ToolBatches, writer_for

USAGE = {"prompt_tokens": 1000, "completion_tokens": 10, "total_tokens": 1010}


def big(tag: str) -> str:
    return "".join(f"{tag} line {i}\n" for i in range(3000))


def pins(engine: StowageEngineCore) -> set[str]:
    store = engine.state.store.store
    with store.index.read() as tx:
        return set(tx.pins_of("s"))


def sha_of(engine: StowageEngineCore, handle: str) -> str:
    return engine.state.store.store.resolve(handle, "s")


def test_tool_batches_keep_the_current_and_the_previous_one():
    batches = ToolBatches()
    batches.add("a")
    batches.next()
    batches.add("b", "c")
    assert batches.spared == {"a", "b", "c"}
    batches.next()
    assert batches.spared == {"b", "c"}
    batches.next()
    assert batches.spared == frozenset()


def test_a_response_releases_what_two_batches_ago_stored_unless_the_last_request_points_to_it(tmp_path):
    engine = StowageEngineCore(
        load_settings({"stowage": {"spill": {"threshold_tokens": 500}}}),
        summary_model=lambda prompt, runtime, timeout=None: "## Goal\nG",
    )
    engine.update_model("m", 128_000)
    engine.on_session_start("s", hermes_home=str(tmp_path))
    first = engine.spill_tool_result("terminal", "{}", big("first")).text
    (first_handle,) = HANDLE_REF.findall(first)
    assert sha_of(engine, first_handle) in pins(engine)  # pinned as it is written
    engine.update_from_response(USAGE)
    second = engine.spill_tool_result("terminal", "{}", big("second")).text
    (second_handle,) = HANDLE_REF.findall(second)
    assert {sha_of(engine, first_handle), sha_of(engine, second_handle)} <= pins(engine)
    engine.update_from_response(USAGE)  # the model has answered the request that showed the second output
    assert sha_of(engine, first_handle) not in pins(engine)  # two batches ago, and no request points to it
    assert sha_of(engine, second_handle) in pins(engine)
    engine.update_from_response(USAGE)
    assert sha_of(engine, second_handle) not in pins(engine)

    writer_for(engine.state.store.store.root).drain()  # the preview is recorded in the background
    engine.state.store.pin_request([{"role": "tool", "tool_call_id": "c1", "content": first}])
    engine.update_from_response(USAGE)
    engine.update_from_response(USAGE)
    shown = hashlib.sha256(first.encode()).hexdigest()  # the preview itself, recorded as it was written
    assert pins(engine) == {sha_of(engine, first_handle), shown}  # the last request's references stay spared


def _spilling_engine(tmp_path) -> StowageEngineCore:
    settings = load_settings(
        {"stowage": {"store": {"max_store_mb": 1}, "view": {"hot_tokens": 1000, "step_tokens": 1000}}}
    )
    engine = StowageEngineCore(settings, summary_model=lambda prompt, runtime, timeout=None: "## Goal\nG")
    engine.update_model("m", 200_000)
    engine.on_session_start("s", hermes_home=str(tmp_path))
    return engine


def _spill_turn(engine: StowageEngineCore, messages: list[dict], n: int, size: int = 120_000) -> str:
    """One tool call whose output spills; returns the spilled original's handle."""
    call = {"id": f"c{n}", "type": "function", "function": {"name": "terminal", "arguments": f'{{"n": {n}}}'}}
    text = "".join(f"out {n} row {i:07d} " + "y" * 60 + "\n" for i in range(size // 80))
    preview = engine.spill_tool_result("terminal", call["function"]["arguments"], text).text
    assert preview is not None
    messages += [{"role": "assistant", "content": None, "tool_calls": [call]}]
    messages += [{"role": "tool", "tool_call_id": f"c{n}", "content": preview}]
    return HANDLE_REF.findall(preview)[0]


def test_an_original_only_a_view_stub_names_is_not_spared_and_its_stub_then_names_the_preview(tmp_path):
    """Issue 31 item 7 with issue 33 item 3: the cap holds, and no request points to a tombstone.

    A view stub names the spilled original while it exists, but the cap spares only the preview for it; once
    the cap evicts the original, the next request's stub names the preview (readable) and says why.
    """
    from stowage.context_engine.chat.stubs import ORIGINAL_EVICTED_NOTE

    engine = _spilling_engine(tmp_path)
    store = engine.state.store.store
    messages: list[dict] = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
    first = _spill_turn(engine, messages, 0)
    for n in range(1, 6):  # 6 outputs of 120 kB: under the cap, the older previews stubbed
        _spill_turn(engine, messages, n)
    writer_for(store.root).drain()
    sent = engine.shape_request([], messages).messages
    stub = sent[3]["content"]
    assert stub.startswith("[stowage: output omitted]") and f'handle="{first}"' in stub  # the original, one fetch
    assert sha_of(engine, first) not in pins(engine)  # named by a stub only: not spared ...
    preview_sha = hashlib.sha256(messages[3]["content"].encode()).hexdigest()
    assert preview_sha in pins(engine)  # ... its preview is
    assert engine.shape_request([], messages).messages[3]["content"] == stub  # stable while the original exists

    for n in range(6, 10):  # more spills: the cap (1 MiB) evicts the oldest originals
        _spill_turn(engine, messages, n)
    writer_for(store.root).drain()
    sent = engine.shape_request([], messages).messages
    after = sent[3]["content"]
    named = HANDLE_REF.findall(after)
    assert after != stub and ORIGINAL_EVICTED_NOTE in after and first not in after
    assert store.read_bytes(store.resolve(named[0], "s")).decode() == messages[3]["content"]  # the preview
    for message in sent:  # the request names no tombstone
        for handle in HANDLE_REF.findall(message.get("content") or ""):
            store.resolve(handle, "s")
    assert engine.shape_request([], messages).messages[3]["content"] == after  # stable again


def test_an_original_the_request_shows_the_preview_of_stays_spared(tmp_path):
    engine = _spilling_engine(tmp_path)
    messages: list[dict] = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
    handle = _spill_turn(engine, messages, 0)
    writer_for(engine.state.store.store.root).drain()
    sent = engine.shape_request([], messages).messages
    assert sent[3]["content"] == messages[3]["content"]  # hot: shown verbatim
    assert sha_of(engine, handle) in pins(engine)


def test_a_fetch_of_an_original_evicted_after_its_stub_was_sent_names_the_preview(tmp_path):
    """The model answers a request whose stub named an original; a later spill of its batch evicts it."""
    engine = _spilling_engine(tmp_path)
    store = engine.state.store.store
    messages: list[dict] = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
    first = _spill_turn(engine, messages, 0)
    for n in range(1, 6):
        _spill_turn(engine, messages, n)
    writer_for(store.root).drain()
    sent = engine.shape_request([], messages).messages
    assert f'handle="{first}"' in sent[3]["content"]
    for n in range(6, 10):  # the same batch goes on spilling: the cap takes the original the stub named
        _spill_turn(engine, messages, n)
    reply = json.loads(engine.handle_tool_call("stowage_fetch", {"handle": first, "mode": "range"}))
    assert reply["code"] == "evicted_blob" and "preview is still stored" in reply["error"]
    preview = reply["preview_handle"]
    assert f'stowage_fetch(handle="{preview}")' in reply["error"]
    assert store.read_bytes(store.resolve(preview, "s")).decode() == messages[3]["content"]


def test_a_view_stub_of_a_preview_resolves_its_original_once(tmp_path, monkeypatch):
    """One lookup answers both the stub's handle and whether the cap evicted the original (not two)."""
    from stowage.context_engine.view.lean import LeanView

    engine = _spilling_engine(tmp_path)
    store = engine.state.store.store
    messages: list[dict] = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
    originals = [_spill_turn(engine, messages, n) for n in range(6)]
    writer_for(store.root).drain()
    resolved: list[str] = []
    resolve = store.resolve

    def counting(handle: str, session_id: str | None = None) -> str:
        resolved.append(handle)
        return resolve(handle, session_id)

    monkeypatch.setattr(store, "resolve", counting)
    view = LeanView(engine.state.view.settings, engine.state.counter.count_message)  # a fresh memo: every stub a miss
    sent = view.apply(messages, engine.state.store).messages
    stubbed = [h for h in originals if any(f'handle="{h}"' in str(m.get("content")) for m in sent)]
    assert len(stubbed) >= 3, sent  # the older previews are stubs naming their originals
    assert all(resolved.count(h) == 1 for h in stubbed), resolved
