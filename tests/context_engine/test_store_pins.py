"""What a session asks the size cap to spare: its last request, and its two newest tool batches."""

from __future__ import annotations

import hashlib

from stowage.context_engine.config import load_settings
from stowage.context_engine.engine import StowageEngineCore
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
        summary_model=lambda prompt, runtime: "## Goal\nG",
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
