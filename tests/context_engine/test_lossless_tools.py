"""Spill, archive and read-back tools over a real temp store (no host)."""

from __future__ import annotations

import copy
import errno
import json
import re

import pytest

from stowage.blobstore import BlobStore, StoreWriteError
from stowage.context_engine.chat.markers import STORED_PREFIX
from stowage.context_engine.chat.validate import validate_messages
from stowage.context_engine.compaction.compactor import compact
from stowage.context_engine.compaction.inputs import CompactionInputs, CompactionPlan
from stowage.context_engine.config.settings import load_settings
from stowage.context_engine.host_adapter.engine import StowageEngineCore
from stowage.context_engine.store_session.archive import StoreArchive, decode_window, encode_window
from stowage.context_engine.store_session.message_parts import data_url
from stowage.context_engine.store_session.spill import SPILL_HEADER, SpillPolicy, spill_result
from stowage_dev.transcripts import make_transcript

HANDLE = re.compile(r"handle:? ([0-9a-f]{16,64})")
STUB_HANDLE = re.compile(r'stowage_fetch\(handle="([0-9a-f]{16,64})"\)')  # how every stub names its handle


def chars(text: str) -> int:
    return len(text) // 4


@pytest.fixture
def store(tmp_path):
    return BlobStore(tmp_path / "store")


@pytest.fixture
def engine(tmp_path):
    eng = StowageEngineCore(
        load_settings({"stowage": {"spill": {"threshold_tokens": 500}}}),
        summary_model=lambda prompt, runtime, timeout=None: "## Goal\nG\n\n## Next Steps\n- go",
    )
    eng.update_model("m", 128_000)
    eng.on_session_start("session-a", hermes_home=str(tmp_path))
    return eng


def big_log(lines: int = 5000) -> str:
    body = [f"[{i:05d}] compiling unit {i}" for i in range(lines)]
    body[lines // 2] = "ERROR: linker failed: undefined symbol foo_bar"
    return "\n".join(body)


def call(eng: StowageEngineCore, name: str, **args) -> dict:
    return json.loads(eng.handle_tool_call(name, args))


# -- spill --------------------------------------------------------------------------


def test_small_result_is_not_spilled(store):
    assert (
        spill_result(
            store,
            "short output",
            tool_name="terminal",
            arguments="{}",
            session_id="s",
            policy=SpillPolicy(threshold_tokens=100),
            count_tokens=chars,
        )
        is None
    )
    assert store.stats()["blob_count"] == 0


def test_a_short_dense_script_output_is_counted_and_spilled_with_a_smaller_excerpt(store):
    """Fewer characters than the threshold, more tokens: counted (UTF-8 bytes bound the tokens), then spilled."""
    page = ("東京都の人口は約千四百万人である。" * 40)[:90]  # 90 chars, 270 UTF-8 bytes
    counted: list[str] = []

    def three_a_char(text: str) -> int:
        counted.append(text)
        return 3 * len(text)

    spilled = spill_result(
        store,
        page,
        tool_name="web_extract",
        arguments="{}",
        session_id="s",
        policy=SpillPolicy(threshold_tokens=100, excerpt_chars=60),
        count_tokens=three_a_char,
    )
    assert counted == [page] and spilled is not None and spilled.tokens == 270
    excerpt = spilled.message.split("--- preview ---\n", 1)[1].split("\n--- end of preview ---", 1)[0]
    assert len(excerpt) <= 60 // 3  # about 60 tokens of the page (60 characters would be 180 tokens)
    assert store.read_bytes(store.resolve(spilled.handle)).decode() == page
    assert (
        spill_result(
            store,
            page[:33],  # 99 bytes: at most 99 tokens, never counted
            tool_name="web_extract",
            arguments="{}",
            session_id="s",
            policy=SpillPolicy(threshold_tokens=100),
            count_tokens=three_a_char,
        )
        is None
    )
    assert counted == [page]


def test_large_result_becomes_a_preview_with_handle_and_is_stored_byte_for_byte(store):
    text = big_log()
    spilled = spill_result(
        store,
        text,
        tool_name="terminal",
        arguments='{"command": "make"}',
        session_id="s",
        policy=SpillPolicy(threshold_tokens=100),
        count_tokens=chars,
    )
    assert spilled is not None
    message = spilled.message
    assert message.startswith(SPILL_HEADER) and "NOT the whole output" in message
    assert f"{len(text):,} chars" in message and "ERROR: linker failed" in message  # error line from the middle
    assert len(message) < 4000
    assert store.read_bytes(store.resolve(spilled.handle, "s")).decode() == text
    again = spill_result(
        store,
        text,
        tool_name="terminal",
        arguments='{"command": "make"}',
        session_id="s",
        policy=SpillPolicy(threshold_tokens=100),
        count_tokens=chars,
    )
    assert again.message == message  # deterministic: prompt caches survive


def test_a_preview_says_when_the_host_had_already_cut_the_output(store):
    """Hermes's terminal tool keeps head and tail of outputs over tool_output.max_bytes, with this notice."""
    log = big_log(3000)
    cut = log[:20_000] + "\n\n... [OUTPUT TRUNCATED - 123456 chars omitted out of 173456 total] ...\n\n" + log[-30_000:]
    spilled = spill_result(
        store,
        json.dumps({"output": cut, "exit_code": 0}),
        tool_name="terminal",
        arguments="{}",
        session_id="s",
        policy=SpillPolicy(threshold_tokens=100),
        count_tokens=chars,
    )
    assert "the whole output is stored" not in spilled.message
    assert "Hermes had already cut 123,456 of 173,456 chars" in spilled.message
    assert "tool_output.max_bytes" in spilled.message
    whole = spill_result(
        store,
        log,
        tool_name="terminal",
        arguments="{}",
        session_id="s",
        policy=SpillPolicy(threshold_tokens=100),
        count_tokens=chars,
    )
    assert "the whole output is stored" in whole.message


def test_json_envelope_is_stored_with_an_unescaped_line_view(store):
    envelope = json.dumps({"output": big_log(3000), "exit_code": 2})
    spilled = spill_result(
        store,
        envelope,
        tool_name="terminal",
        arguments="{}",
        session_id="s",
        policy=SpillPolicy(threshold_tokens=100),
        count_tokens=chars,
    )
    assert list(spilled.view_handles) == ["output"]
    view = store.resolve(spilled.view_handles["output"], "s")
    assert store.read_lines(view, 1501, 1) == ["ERROR: linker failed: undefined symbol foo_bar"]
    assert json.loads(store.read_bytes(store.resolve(spilled.handle, "s"))) == json.loads(envelope)


def test_a_line_read_of_the_one_line_json_names_the_unescaped_output(engine):
    """The model greps the tool's JSON (one line) instead of its output: the reply names the output's handle."""
    spilled = engine.spill_tool_result(
        "terminal", {"command": "make"}, json.dumps({"output": big_log(), "exit_code": 2})
    )
    original, output = HANDLE.findall(spilled.text or "")[:2]
    grep = call(engine, "stowage_fetch", handle=original, mode="grep", pattern="^ERROR")
    assert grep["matches"] == 0 and grep["scanned_lines"] == 1  # the one line starts with {"output"
    assert grep["line_views"] == [{"handle": output, "path": "output", "lines": 5000}]
    assert f"handle {output} = the string at 'output' (5,000 lines)" in grep["note"]
    paged = call(engine, "stowage_fetch", handle=original, mode="range", start=1, count=5)
    assert paged["line_views"] == grep["line_views"]
    assert "line_views" not in call(engine, "stowage_fetch", handle=original, mode="range", unit="chars", count=9)
    found = call(engine, "stowage_fetch", handle=output, mode="grep", pattern="^ERROR")
    assert found["matches"] == 1 and "line_views" not in found  # the view itself has its lines


def spill_header(store, text: str) -> str:
    spilled = spill_result(
        store,
        text,
        tool_name="api",
        arguments="{}",
        session_id="s",
        policy=SpillPolicy(threshold_tokens=100),
        count_tokens=chars,
    )
    return spilled.message.splitlines()[1]


def test_a_preview_names_its_size_and_for_json_its_top_level_shape(store):
    one_line_array = json.dumps([{"id": i, "name": f"item {i}"} for i in range(300)])
    assert spill_header(store, one_line_array) == (
        f"api() returned {len(one_line_array):,} chars on one line, a JSON array of 300 items "
        f"(~{chars(one_line_array):,} tokens); the whole output is stored."
    )
    envelope = json.dumps({"output": big_log(300), "exit_code": 2, "stderr": ""})
    assert f"{len(envelope):,} chars on one line, a JSON object with 3 keys: output, exit_code, stderr (" in (
        spill_header(store, envelope)
    )
    pretty = json.dumps({f"k{i}": i for i in range(200)}, indent=1)
    assert f"{len(pretty):,} chars, 202 lines, a JSON object with 200 keys: k0, k1, k2, k3, k4, k5, …" in (
        spill_header(store, pretty)
    )
    log = big_log(300)
    assert f"returned {len(log):,} chars, 300 lines (~" in spill_header(store, log)
    assert " 1 lines" not in spill_header(store, "x" * 5000)


@pytest.mark.parametrize(
    "policy",
    [
        SpillPolicy(threshold_tokens=100, never_spill=("read_file",)),
        SpillPolicy(threshold_tokens=100, per_tool={"read_file": 10**9}),
        SpillPolicy(enabled=False),
    ],
)
def test_never_spill_per_tool_and_disabled(store, policy):
    assert (
        spill_result(
            store, big_log(), tool_name="read_file", arguments="{}", session_id="s", policy=policy, count_tokens=chars
        )
        is None
    )


def test_store_write_failure_passes_the_result_through(store, monkeypatch):
    def full_disk(*args, **kwargs):
        raise StoreWriteError("no space left on device", errno.ENOSPC)

    monkeypatch.setattr(store, "put", full_disk)
    assert (
        spill_result(
            store,
            big_log(),
            tool_name="terminal",
            arguments="{}",
            session_id="s",
            policy=SpillPolicy(threshold_tokens=100),
            count_tokens=chars,
        )
        is None
    )


def test_a_spill_says_what_it_did_in_a_typed_outcome(engine, monkeypatch):
    """The host glue's chat note reads the outcome: kept, spilled (handle and size), or not storable."""
    kept = engine.spill_tool_result("terminal", {}, "short output")
    assert kept.text is None and kept.spilled is None
    text = big_log()
    spilled = engine.spill_tool_result("terminal", {"command": "make"}, text)
    assert spilled.text is not None and spilled.text.startswith(SPILL_HEADER)
    record = spilled.spilled
    assert record is not None and record == engine.state.store.recent_spills[-1]
    assert (record.tool, record.chars) == ("terminal", len(text)) and record.handle in spilled.text
    assert record.tokens > 500 and engine.state.store.status().spills == 1

    def full_disk(*args, **kwargs):
        raise StoreWriteError("no space left on device", errno.ENOSPC)

    monkeypatch.setattr(engine.state.store.store, "put", full_disk)
    failed = engine.spill_tool_result("terminal", {}, text + "\nanother run")
    assert failed.spilled is None and failed.text is not None and failed.text.endswith("another run")
    assert engine.state.store.status().spill_failures == 1 and engine.state.store.status().spills == 1


# -- read-back tools ------------------------------------------------------------------


def spilled_handles(eng: StowageEngineCore, text: str) -> list[str]:
    message = eng.spill_tool_result("terminal", {"command": "make"}, text).text
    assert message is not None
    return HANDLE.findall(message)


def test_fetch_modes(engine):
    text = big_log()
    (handle,) = spilled_handles(engine, text)
    stat = call(engine, "stowage_fetch", handle=handle)
    assert stat["lines"] == 5000 and stat["tool"] == "terminal" and stat["kind"] == "spill"
    rng = call(engine, "stowage_fetch", handle=handle, mode="range", start=4999, count=5)
    assert rng["end"] == 5000 and rng["next_start"] is None and "04999" in rng["text"]
    chars_range = call(engine, "stowage_fetch", handle=handle, mode="range", unit="chars", start=0, count=7)
    assert chars_range["text"] == text[:7]
    grep = call(engine, "stowage_fetch", handle=handle, mode="grep", pattern="linker", context=1)
    assert grep["matches"] == 1 and "2501: ERROR: linker failed" in grep["text"]
    refused = call(engine, "stowage_fetch", handle=handle, mode="full")
    assert "over the full-fetch limit" in refused["error"] and "range" in refused["error"]


def test_fetch_json_path(engine):
    doc = json.dumps({"items": [{"name": f"n{i}", "v": "x" * 50} for i in range(300)]})
    (handle,) = spilled_handles(engine, doc)
    assert call(engine, "stowage_fetch", handle=handle, mode="json", path="items[7].name")["value"] == '"n7"'
    missing = call(engine, "stowage_fetch", handle=handle, mode="json", path="itemz")
    assert "items" in missing["error"]


@pytest.mark.parametrize(
    "bad,fragment",
    [
        ("../../etc/passwd", "file path"),
        ("/etc/passwd", "file path"),
        ("abc\x00def0123456789", "file path"),
        ("zz", "not a valid blob handle"),
        ("0123456789abcdef", "no stored blob"),
        (12, "not a valid blob handle"),
    ],
)
def test_bad_handles_get_clear_errors(engine, bad, fragment):
    assert fragment in call(engine, "stowage_fetch", handle=bad)["error"]


def test_foreign_session_handle_is_refused(engine, tmp_path):
    (handle,) = spilled_handles(engine, big_log())
    other = copy.deepcopy(engine)
    other.on_session_start("session-b", hermes_home=str(tmp_path))
    reply = call(other, "stowage_fetch", handle=handle)
    unknown = call(other, "stowage_fetch", handle="0" * 16)
    assert reply["code"] == unknown["code"] == "unknown_handle"
    assert reply["error"] == unknown["error"].replace("0" * 16, handle)  # no existence oracle


@pytest.mark.parametrize("pattern", ["(a+)+$", "(x+x+)+y", "a" * 300, "(?P<bad"])
def test_hostile_or_broken_patterns_are_errors_or_bounded(engine, pattern):
    (handle,) = spilled_handles(engine, "a" * 30000 + "!\n" + big_log())
    reply = call(engine, "stowage_fetch", handle=handle, mode="grep", pattern=pattern)
    assert "error" in reply or reply.get("matches") is not None


def test_history_grep_finds_spilled_and_pruned_content_newest_first(engine):
    spilled_handles(engine, big_log())
    messages = make_transcript(30, seed=3)
    engine.compress(messages, current_tokens=100_000, force=True)
    reply = call(engine, "stowage_grep", pattern="linker failed|AssertionError", max_results=5)
    assert reply["results"]
    kinds = {r["kind"] for r in reply["results"]}
    assert kinds & {"pruned", "window"} and reply["searched"] >= 1


# -- lossless compaction ------------------------------------------------------------------


def test_window_round_trips_through_json_lines():
    messages = make_transcript(5, seed=2)
    assert decode_window(encode_window(messages)) == messages


def test_compaction_keeps_every_pruned_output_and_the_window(store):
    messages = make_transcript(40, seed=11)
    archive = StoreArchive(store, lambda: "s")
    plan = CompactionPlan(protect_first_n=3, tail_budget_tokens=3000, tail_min_messages=4, context_length=128_000)
    outcome = compact(
        messages,
        CompactionInputs(
            plan, count=lambda m: len(json.dumps(m)) // 4, summarize=lambda prompt: "## Goal\nG", archive=archive
        ),
    )
    assert outcome.changed and validate_messages(outcome.messages) == []
    originals = {m["tool_call_id"]: m["content"] for m in messages if m.get("role") == "tool"}
    stubs = [m for m in outcome.messages if m.get("role") == "tool" and m["content"].startswith(STORED_PREFIX)]
    assert stubs
    for stub in stubs:
        (handle,) = STUB_HANDLE.findall(stub["content"])
        assert store.read_bytes(store.resolve(handle, "s")).decode() == originals[stub["tool_call_id"]]
    window_handle = HANDLE.findall(outcome.window_reference)[0]
    window = [with_images_back(store, m) for m in decode_window(store.read_bytes(store.resolve(window_handle, "s")))]
    start = messages.index(window[0])
    assert window == messages[start : start + len(window)]
    assert "image(s) are stored on their own" in outcome.window_reference  # the transcript's images, each its own blob


IMAGE_HANDLE = re.compile(r"^\[stowage: image removed from older context; stored under handle ([0-9a-f]{16,64}) \(")


def with_images_back(store: BlobStore, message: dict) -> dict:
    """A window's message with each stored image's placeholder replaced by the image part it stands for."""
    if not isinstance(message.get("content"), list):
        return message
    parts = []
    for part in message["content"]:
        found = IMAGE_HANDLE.match(part.get("text", "")) if part.get("type") == "text" else None
        if found is None:
            parts.append(part)
            continue
        sha = store.resolve(found.group(1), "s")
        url = data_url(store.stat(sha).content_type, store.read_bytes(sha))
        parts.append({"type": "image_url", "image_url": {"url": url}})
    return {**message, "content": parts}


def test_compaction_without_a_writable_store_still_compacts(store, monkeypatch):
    monkeypatch.setattr(store, "put", lambda *a, **k: (_ for _ in ()).throw(StoreWriteError("disk full", 28)))
    archive = StoreArchive(store, lambda: "s")
    plan = CompactionPlan(protect_first_n=3, tail_budget_tokens=3000, tail_min_messages=4, context_length=128_000)
    outcome = compact(
        make_transcript(30, seed=4),
        CompactionInputs(
            plan, count=lambda m: len(json.dumps(m)) // 4, summarize=lambda prompt: "## Goal\nG", archive=archive
        ),
    )
    assert outcome.changed and validate_messages(outcome.messages) == []
    assert archive.failures > 0 and outcome.window_reference is None


def test_oversized_arguments_cut_by_compaction_are_stored_whole_under_a_handle(store):
    archive = StoreArchive(store, lambda: "s")
    big = json.dumps({"path": "notes.md", "content": "paragraph " * 600})
    messages = [
        {"role": "user", "content": "write the notes"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "w1", "type": "function", "function": {"name": "write_file", "arguments": big}}],
        },
        {"role": "tool", "tool_call_id": "w1", "content": "written"},
    ]
    for n in range(12):
        messages += [{"role": "assistant", "content": f"step {n}"}, {"role": "user", "content": f"go on {n} " * 80}]
    plan = CompactionPlan(protect_first_n=3, tail_budget_tokens=300, tail_min_messages=4, context_length=128_000)
    outcome = compact(
        messages,
        CompactionInputs(
            plan, count=lambda m: len(json.dumps(m)) // 4, summarize=lambda prompt: "## Goal\nG", archive=archive
        ),
    )
    assert outcome.changed and outcome.stats.arguments_shrunk == 1
    cut = outcome.messages[1]["tool_calls"][0]["function"]["arguments"]
    parsed = json.loads(cut)
    assert len(cut) < len(big) and parsed["path"] == "notes.md"
    handle = re.search(r'handle="([0-9a-f]{16,64})"', parsed["_stowage_arguments"]).group(1)
    assert store.read_bytes(store.resolve(handle)).decode() == big


def _spilled_session(store):
    from stowage.context_engine.store_session.session import StoreSession, writer_for

    session = StoreSession(load_settings({}), store=store)
    session.start("s")
    original = "\n".join(f"line {i}: some build output" for i in range(4000))
    preview = session.spill("terminal", {"command": "make"}, original, lambda text: len(text) // 4).text
    assert preview is not None and preview.startswith(SPILL_HEADER)
    writer_for(store.root).drain()  # the preview is recorded in the background
    original_handle = store.put(original.encode(), session_id="s", tool_name="terminal", kind="spill").handle
    return session, original, preview, original_handle


def _fetch_line(session, handle: str, line: int) -> str:
    reply = json.loads(
        session.handle_tool("stowage_fetch", {"handle": handle, "mode": "range", "start": line, "count": 1})
    )
    return reply["text"]


def test_a_pruned_spill_preview_names_only_the_original_handle_the_spill_recorded(store):
    from stowage.context_engine.chat.stubs import PrunedOutput

    session, original, preview, original_handle = _spilled_session(store)
    preview_handle = store.put(preview.encode(), session_id="s", tool_name="terminal", kind="preview").handle
    stub = session.archive().render_pruned(PrunedOutput(0, "c1", "terminal", '{"command": "make"}', preview))
    assert stub is not None and STUB_HANDLE.findall(stub) == [original_handle] and preview_handle not in stub
    assert "line 2999: some build output" not in preview  # the middle is not in the preview ...
    assert "line 2999: some build output" in _fetch_line(session, original_handle, 3000)  # ... one fetch reads it

    # A look-alike text this session did not write as a preview is not parsed for a handle: it is kept itself.
    look_alike = f"{SPILL_HEADER}\nhandle: {original_handle}\n" + "x" * 5000
    stub = session.archive().render_pruned(PrunedOutput(1, "c2", "terminal", "{}", look_alike))
    (handle,) = STUB_HANDLE.findall(stub)
    assert handle != original_handle and store.read_bytes(store.resolve(handle, "s")).decode() == look_alike


def test_a_view_stub_of_a_preview_names_the_original_in_this_process_and_the_next(store):
    from stowage.context_engine.chat.markers import BlobKind
    from stowage.context_engine.store_session.session import StoreSession

    session, original, preview, original_handle = _spilled_session(store)
    ask = {"kind": BlobKind.OUTPUT, "tool_name": "terminal", "arguments": '{"command": "make"}'}
    found = session.handle_for(preview, **ask)
    assert found is not None and found.handle == original_handle and not found.original_evicted  # remembered
    later = StoreSession(load_settings({}), store=store)  # a later process of the same conversation: no memory
    later.start("s")
    found = later.handle_for(preview, **ask)
    assert later.spill_origin(preview) is None and found is not None and found.handle == original_handle  # the store
    assert _fetch_line(later, original_handle, 1).endswith("line 0: some build output")

    # A look-alike recorded as a plain output is kept as itself, in any process.
    look_alike = f"{SPILL_HEADER}\nhandle: {original_handle}\n" + "x" * 5000
    assert later.spill("terminal", {}, look_alike, lambda text: 10).text is None  # small: recorded as an output
    from stowage.context_engine.store_session.session import writer_for

    writer_for(store.root).drain()
    found = later.handle_for(look_alike, **ask)
    assert found is not None and found.handle != original_handle and not found.original_evicted

    # An original the store no longer holds is never named: the stub falls back to the preview's own bytes.
    store.evict(original_handle)
    found = session.handle_for(preview, **ask)
    assert found is not None and found.original_evicted  # one lookup: the handle and why it is the preview's
    assert found.handle != original_handle and store.read_bytes(store.resolve(found.handle, "s")).decode() == preview


def test_a_later_process_reads_a_previews_original_from_the_stores_records_not_its_text(store):
    from stowage.context_engine.chat.markers import BlobKind
    from stowage.context_engine.store_session.session import StoreSession
    from stowage.context_engine.store_session.stubs import recorded_preview_origin

    session, original, preview, original_handle = _spilled_session(store)
    assert recorded_preview_origin(store, preview) == original_handle
    # A preview whose text names another blob first: the store's record decides, the text is never parsed.
    decoy = store.put(b"another output\n" * 400, session_id="s", kind="spill")
    misleading = f"{SPILL_HEADER}\nhandle: {decoy.handle}\n" + "y" * 5000
    store.put(misleading.encode(), session_id="s", kind="preview", source=store.resolve(original_handle, "s"))
    assert recorded_preview_origin(store, misleading) == original_handle
    later = StoreSession(load_settings({}), store=store)
    later.start("s")
    found = later.handle_for(misleading, kind=BlobKind.OUTPUT, tool_name="terminal", arguments="{}")
    assert found is not None and found.handle == original_handle


def test_a_preview_recorded_before_the_link_was_kept_is_still_read(store):
    """Stores written before previews recorded their original (no provenance source): the old reading of the
    preview's first handle line, for those records only."""
    from stowage.context_engine.store_session.stubs import digest, recorded_preview_origin

    original = store.put(b"the whole output\n" * 400, session_id="s", kind="spill")
    old_preview = f"{SPILL_HEADER}\nhandle: {original.handle}\n" + "z" * 5000
    store.put(old_preview.encode(), session_id="s", kind="preview")  # as an older Stowage recorded it
    assert store.source_handle(digest(old_preview)) is None
    assert recorded_preview_origin(store, old_preview) == original.handle


def _lane():
    """A writer lane that runs each put on its own thread, released by the test."""
    import threading
    from concurrent.futures import Future

    gate, futures = threading.Event(), []

    def submit(fn):
        future: Future = Future()

        def work():
            gate.wait(10)
            try:
                future.set_result(fn())
            except BaseException as exc:  # noqa: BLE001
                future.set_exception(exc)

        threading.Thread(target=work, daemon=True).start()
        futures.append(future)
        return future

    return gate, futures, submit


def test_window_is_put_during_the_summary_call_and_named_only_once_resolvable(store):
    gate, futures, submit = _lane()
    archive = StoreArchive(store, lambda: "s", submit=submit)
    seen = []

    def summarize(prompt):
        seen.append(futures[0].done())  # the put was started and is still waiting for the lane
        gate.set()
        return "## Goal\nG"

    plan = CompactionPlan(protect_first_n=3, tail_budget_tokens=3000, tail_min_messages=4, context_length=128_000)
    outcome = compact(
        make_transcript(40, seed=11),
        CompactionInputs(plan, count=lambda m: len(json.dumps(m)) // 4, summarize=summarize, archive=archive),
    )
    assert seen == [False] and futures[0].done()
    (handle,) = HANDLE.findall(outcome.window_reference)
    assert handle in outcome.summary_body and store.resolve(handle, "s")


def test_aborted_compaction_waits_for_its_window_put(store):
    from stowage.context_engine.summary.reply import SummaryFailure

    gate, futures, submit = _lane()
    archive = StoreArchive(store, lambda: "s", submit=submit)

    def summarize(prompt):
        gate.set()
        raise SummaryFailure("auth", "401 invalid api key")

    plan = CompactionPlan(
        protect_first_n=3,
        tail_budget_tokens=3000,
        tail_min_messages=4,
        context_length=128_000,
        abort_on_summary_failure=True,
    )
    outcome = compact(
        make_transcript(40, seed=11),
        CompactionInputs(plan, count=lambda m: len(json.dumps(m)) // 4, summarize=summarize, archive=archive),
    )
    assert outcome.aborted and futures[0].done()


def test_failed_window_put_names_no_handle(store, monkeypatch):
    monkeypatch.setattr(store, "put", lambda *a, **k: (_ for _ in ()).throw(StoreWriteError("disk full", 28)))
    gate, _futures, submit = _lane()
    gate.set()
    archive = StoreArchive(store, lambda: "s", submit=submit)
    plan = CompactionPlan(protect_first_n=3, tail_budget_tokens=3000, tail_min_messages=4, context_length=128_000)
    outcome = compact(
        make_transcript(40, seed=11),
        CompactionInputs(
            plan, count=lambda m: len(json.dumps(m)) // 4, summarize=lambda prompt: "## Goal\nG", archive=archive
        ),
    )
    assert outcome.changed and outcome.window_reference is None and archive.failures >= 1
    assert not HANDLE.findall(outcome.summary_body)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_window_lane_inherited_across_fork_still_runs_work():
    import os

    from stowage.context_engine.store_session.session import window_lane

    assert window_lane().run(lambda: 1).result(timeout=5) == 1  # the parent's pool has a thread
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            ok = window_lane().run(lambda: 2).result(timeout=5) == 2
        except BaseException:  # noqa: BLE001
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
