"""Inline pre-selection: a fixed tool list, the picked schemas as text in their user message, byte-stable.

Through ``ToolSearchSession`` and the engine's request shaping (the lean view first, then the blocks), with
the stand-in embedding endpoint on 127.0.0.1.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from stowage.context_engine.chat.markers import VIEW_STUB_PREFIX
from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.session.tool_search_embeddings import DenseLegSource, reset_shared_legs
from stowage.tool_search import BRIDGE_NAMES
from stowage.tool_search.activation import estimate_tokens
from stowage.tool_search.inline import BLOCK_OPEN, insert_blocks, render_block, user_keys
from stowage.tool_search.inline_picks import reset_stores
from stowage.tool_search.session import ToolSearchSession
from stowage_dev.embedding_server import ConceptEmbedder, EmbeddingServer

from .five_tools import FIVE_TOOLS


def schema(name: str, description: str) -> dict[str, Any]:
    params = {"type": "object", "properties": {"target": {"type": "string", "description": f"what {name} acts on"}}}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": params}}


TOOLS = [schema(name, description) for name, description in FIVE_TOOLS]
NAMES = {t["function"]["name"] for t in TOOLS}
HOST = {"core_names": (), "toolset_of": lambda _: "x", "registered": NAMES}


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    reset_shared_legs()
    reset_stores()
    with EmbeddingServer(ConceptEmbedder(), slow_s=1.0) as s:
        yield s
    reset_shared_legs()
    reset_stores()


def settings(server: EmbeddingServer | None, **extra: Any) -> dict[str, Any]:
    ts: dict[str, Any] = {"enabled": "on", "inline_k": 2, **extra}
    if server is not None:
        ts.update(embedding_endpoint=server.base_url, embedding_model="concepts", embedding_timeout_s=1)
    return ts


def session(ts: dict[str, Any], store: Path) -> ToolSearchSession:
    section = load_settings({"stowage": {"tool_search": ts}}).tool_search
    return ToolSearchSession(
        section, estimate_tokens, dense=DenseLegSource(section, lambda: store), picks_folder=lambda: store
    )


def request(s: ToolSearchSession, messages: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """One request: the tool names it carries and its messages with the blocks inserted."""
    shaped = s.shape_request(TOOLS, messages, context_length=128_000, **HOST)
    return [t["function"]["name"] for t in shaped.tools], insert_blocks(
        shaped.messages, s.inline_blocks(shaped.messages)
    )


def conversation(*turns: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": "terse"}]
    for n, text in enumerate(turns):
        out.append({"role": "user", "content": text})
        if n < len(turns) - 1:
            out.append({"role": "assistant", "content": f"answer {n}"})
    return out


def test_keys_follow_place_and_content_and_insertion_leaves_the_input_alone() -> None:
    a = conversation("check what is running", "read the file")
    same = copy.deepcopy(a)
    assert user_keys(a) == user_keys(same)
    other = conversation("read the file", "read the file")
    assert user_keys(other)[1][1] != user_keys(a)[1][1]  # same text, another history: another key
    out = insert_blocks(a, {1: "BLOCK", 0: "never: not a user message"})
    assert a == same and out[1]["content"] == "check what is running\n\nBLOCK" and out[0] == a[0]
    parts = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert insert_blocks(parts, {0: "B"})[0]["content"][-1] == {"type": "text", "text": "B"}


def test_a_block_renders_the_same_bytes_for_the_same_pick() -> None:
    schemas = [{"name": "a", "description": "d", "parameters": {"z": 1, "a": 2}}]
    assert render_block(schemas, ["b"]) == render_block(copy.deepcopy(schemas), ["b"])
    assert '"parameters":{"a":2,"z":1}' in render_block(schemas) and "shown earlier" in render_block([], ["b"])


def test_the_tool_list_stays_fixed_and_the_paraphrase_travels_in_its_user_message(
    server: EmbeddingServer, tmp_path: Path
) -> None:
    s = session(settings(server), tmp_path)
    first_names, first = request(s, conversation("check what is running"))
    assert set(BRIDGE_NAMES) <= set(first_names) and not NAMES & set(first_names)  # bridges, no schema
    block = first[-1]["content"]
    assert BLOCK_OPEN in block and '- proc_ls: {"description":"Show processes on the host."' in block
    assert s.status().inline and s.status().inlined[0] == "proc_ls"
    assert s.status().semantic.startswith("BM25 + embeddings")

    history = conversation("check what is running", "open a bug ticket about the login page")
    before = copy.deepcopy(history)
    names, second = request(s, history)
    assert names == first_names  # the same list: the cached prefix holds
    assert history == before  # the history itself is never changed
    assert second[1]["content"] == block  # the first message's block, byte for byte
    assert "gh_new_issue" in second[-1]["content"]


def test_a_restart_renders_the_same_bytes_even_with_the_endpoint_down(server: EmbeddingServer, tmp_path: Path) -> None:
    history = conversation("check what is running", "tell the channel the deploy is done")
    _, before = request(session(settings(server), tmp_path), history)
    reset_stores()
    reset_shared_legs()  # a new process: picks read back from the store folder
    server.mode = "500"
    calls = len(server.requests)
    _, after = request(session(settings(server), tmp_path), history)
    assert json.dumps(after) == json.dumps(before) and BLOCK_OPEN in after[-1]["content"]
    assert len(server.requests) == calls  # kept picks: nothing ranked again


def test_a_schema_shown_before_is_named_again_in_one_line(server: EmbeddingServer, tmp_path: Path) -> None:
    s = session(settings(server), tmp_path)
    request(s, conversation("check what is running"))
    _, sent = request(s, conversation("check what is running", "which processes are running now"))
    newest = sent[-1]["content"]
    assert "- proc_ls:" not in newest and "shown earlier in this conversation: proc_ls" in newest


def test_an_earlier_message_without_a_pick_gets_none(server: EmbeddingServer, tmp_path: Path) -> None:
    s = session(settings(server), tmp_path)
    _, sent = request(s, conversation("check what is running", "read the file"))
    assert BLOCK_OPEN not in sent[1]["content"] and BLOCK_OPEN in sent[-1]["content"]


def test_a_hanging_endpoint_costs_one_deadline_and_status_says_why(server: EmbeddingServer, tmp_path: Path) -> None:
    s = session(settings(server, embedding_timeout_s=0.3), tmp_path)
    request(s, conversation("check what is running"))  # the catalog indexed, the endpoint fine
    server.mode = "hang"
    names, sent = request(s, conversation("check what is running", "read the file"))
    assert "fs_read" in sent[-1]["content"]  # BM25 alone picked it
    assert s.status().semantic.startswith("BM25 alone"), s.status().semantic
    assert not s.status().semantic.startswith("BM25 + embeddings")


def test_without_an_endpoint_auto_keeps_list_mode_off_and_inline_off(tmp_path: Path) -> None:
    s = session(settings(None), tmp_path)
    _, sent = request(s, conversation("check what is running"))
    assert not s.inline and BLOCK_OPEN not in sent[-1]["content"]


# -- through the engine: the lean view first, then the blocks, counted as sent ------------------
def long_history(turns: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "terse"}, {"role": "user", "content": turns}]
    for n in range(12):
        call = {"id": f"c{n}", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": f"output {n}\n" * 300})
    return messages


def shaped_by_engine(tmp_path: Path, ts: dict[str, Any], selects_context: bool) -> tuple[Any, StowageEngineCore]:
    config = {"view": {"hot_tokens": 1000, "step_tokens": 1000}, "tool_search": ts}
    eng = StowageEngineCore(load_settings({"stowage": config}))
    eng.update_model("m", 128_000)
    eng.on_session_start("s", hermes_home=str(tmp_path))
    messages = long_history(ASK)
    if selects_context:  # hosts 0.20+: the hook makes the lean view, the middleware then runs on its output
        messages = eng.select_context(messages) or messages
    return eng.shape_request(copy.deepcopy(TOOLS), messages, **HOST), eng


ASK = "check what is running on the host"


@pytest.mark.parametrize("selects_context", [False, True])
def test_the_engine_inserts_after_the_lean_view_and_counts_the_blocks(
    server: EmbeddingServer, tmp_path: Path, selects_context: bool
) -> None:
    shaped, eng = shaped_by_engine(tmp_path / "on", settings(server), selects_context)
    plain, off = shaped_by_engine(tmp_path / "off", settings(server, inline="off"), selects_context)
    user = shaped.messages[1]["content"]
    assert user.startswith(ASK + "\n\n" + BLOCK_OPEN) and "proc_ls" in user
    assert plain.messages[1]["content"] == ASK and shaped.tools == plain.tools  # the same list either way
    # the view ran first and the blocks were not stubbed: everything but the user message is as the view made it
    assert sum(str(m.get("content")).startswith(VIEW_STUB_PREFIX) for m in shaped.messages) >= 4
    assert shaped.messages[2:] == plain.messages[2:] and shaped.messages[0] == plain.messages[0]
    block = user[len(ASK) + 2 :]
    # the request is counted as sent: the blocks' tokens on top of the same request without them
    assert eng.state.sent_request.tokens - off.state.sent_request.tokens == eng.state.counter.count_text(block)


# -- child agents: the review agent and subagents keep the parent's tool list ---------------------
def test_a_child_copy_keeps_the_parents_tool_list_in_both_modes(server: EmbeddingServer, tmp_path: Path) -> None:
    parent_history = conversation("check what is running")
    review = [*parent_history, {"role": "assistant", "content": "done"}]
    review.append({"role": "user", "content": "Review the conversation and save anything worth remembering."})
    for mode in ("auto", "off"):  # inline (the list never varies), and list mode (the parent's pick is kept)
        parent = session(settings(server, preselect=True, inline=mode, preselect_k=1), tmp_path / mode)
        parent_names, parent_sent = request(parent, parent_history)
        child = copy.deepcopy(parent)  # how a host makes a review agent's or subagent's engine
        child_names, child_sent = request(child, review)
        assert child_names == parent_names, mode
        assert child_sent[: len(parent_sent)] == parent_sent  # the parent's prefix, byte for byte
    assert "proc_ls" in parent_names  # list mode: the parent's pick, not one for the review prompt


def test_on_newer_hosts_select_context_inserts_and_the_middleware_adds_nothing_twice(
    server: EmbeddingServer, tmp_path: Path
) -> None:
    first, eng = shaped_by_engine(tmp_path, settings(server), selects_context=True)
    block = first.messages[1]["content"][len(ASK) + 2 :]
    history = [*long_history(ASK), {"role": "assistant", "content": "done"}, {"role": "user", "content": "read it"}]
    selected = eng.select_context(copy.deepcopy(history))
    assert selected is not None and selected[1]["content"] == f"{ASK}\n\n{block}"  # what the host measures
    assert BLOCK_OPEN in selected[-1]["content"]
    counted = eng.state.sent_request.tokens
    shaped = eng.shape_request(copy.deepcopy(TOOLS), selected, **HOST)
    assert shaped.messages == selected and eng.state.sent_request.tokens == counted  # nothing added twice
    assert user_keys(selected) == user_keys(history)  # a block is not part of its message's key
