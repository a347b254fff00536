"""Needed while hidden: an output the request did not carry whose distinctive token the answer used."""

from __future__ import annotations

from typing import Any

from stowage.command.replay.offline.hidden import HiddenUseTracker, common_tokens
from stowage.context_engine.view.quotes import code_lines, code_tokens, quotable


def call(cid: str, command: str) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": "bash", "arguments": f'{{"command": "{command}"}}'}}


TRANSCRIPT: list[dict[str, Any]] = [
    {"role": "user", "content": "Fix the failing test."},
    {"role": "assistant", "content": "Search first.", "tool_calls": [call("c1", "grep -rn frame src")]},
    {"role": "tool", "tool_call_id": "c1", "content": "src/net/frames.py:12: def read_frame(sock):"},
    {"role": "assistant", "content": "Run the tests.", "tool_calls": [call("c2", "pytest -q")]},
    {"role": "tool", "tool_call_id": "c2", "content": "FAILED tests/test_io.py::test_short_read"},
    {"role": "assistant", "content": "Open src/net/frames.py around read_frame.", "tool_calls": [call("c3", "ls")]},
    {"role": "tool", "tool_call_id": "c3", "content": "README"},
]


def request(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"messages": list(messages)}


def test_code_like_tokens_and_lines_not_plain_words():
    assert code_tokens("the read_frame helper in src/net/frames.py calls self.sock.recv and parseHeader") == {
        "read_frame",
        "src/net/frames.py",
        "self.sock.recv",
        "parseHeader",
    }
    assert code_tokens("Between 12345 and another sentence") == set()
    assert code_lines("src/a.py:3:    total = compute(y)\n  12\tif ready_to_go:\nplain words here\nreturn {") == {
        "total = compute(y)",
        "if ready_to_go:",
    }
    assert "read_frame" in quotable("def read_frame(sock):")


def test_an_output_stubbed_when_the_answer_uses_its_token_is_needed_while_hidden():
    tracker = HiddenUseTracker(TRANSCRIPT)
    grep, tests = TRANSCRIPT[2], TRANSCRIPT[4]
    stub = {"role": "tool", "tool_call_id": "c1", "content": "[stowage: old output omitted] bash -> ok"}
    tracker.event("request", request=request(TRANSCRIPT[0]))
    tracker.event("request", request=request(*TRANSCRIPT[:3]))
    tracker.event("request", request=request(*TRANSCRIPT[:2], stub, TRANSCRIPT[3], tests))
    figures = tracker.figures()
    assert (figures.outputs, figures.hidden, figures.hidden_stubbed, figures.used_later) == (3, 1, 1, 1)
    assert figures.needed_while_hidden == 1
    example = figures.examples[0]
    assert example["how"] == "stubbed" and example["request"] == 2 and example["tool"] == "bash"
    assert example["quoted"] in {"read_frame", "src/net/frames.py"}
    assert grep["content"]  # the transcript itself is not changed


def test_nothing_is_needed_when_the_output_is_verbatim_or_its_token_is_elsewhere_in_the_request():
    verbatim = HiddenUseTracker(TRANSCRIPT)
    for k in (1, 3, 5):
        verbatim.event("request", request=request(*TRANSCRIPT[:k]))
    assert verbatim.figures().needed_while_hidden == 0

    carried = HiddenUseTracker(TRANSCRIPT)
    summary = {"role": "user", "content": "[CONTEXT SUMMARY] read_frame in src/net/frames.py fails on short reads"}
    carried.event("request", request=request(TRANSCRIPT[0]))
    carried.event("request", request=request(*TRANSCRIPT[:3]))
    carried.event("request", request=request(summary, TRANSCRIPT[3], TRANSCRIPT[4]))  # c1 compacted away, tokens kept
    figures = carried.figures()
    assert figures.hidden == 1 and figures.hidden_stubbed == 0 and figures.needed_while_hidden == 0


def test_an_output_compacted_away_is_needed_when_nothing_carries_its_token():
    tracker = HiddenUseTracker(TRANSCRIPT)
    tracker.event("request", request=request(TRANSCRIPT[0]))
    tracker.event("request", request=request(*TRANSCRIPT[:3]))
    tracker.event(
        "request",
        request=request({"role": "user", "content": "[CONTEXT SUMMARY] work happened"}, TRANSCRIPT[3], TRANSCRIPT[4]),
    )
    figures = tracker.figures()
    assert figures.needed_while_hidden == 1 and figures.examples[0]["how"] == "absent"
    assert figures.gaps == [0]


def test_a_later_transcript_of_a_chained_session_never_used_an_earlier_ones_output():
    """Its recorded agent never saw the earlier transcript: a token both name is not a use."""
    later = [
        {"role": "user", "content": "Another task."},
        {"role": "assistant", "content": "Look at read_frame again.", "tool_calls": [call("d1", "ls")]},
        {"role": "tool", "tool_call_id": "d1", "content": "README"},
    ]
    messages = TRANSCRIPT + later
    stub = {"role": "tool", "tool_call_id": "c1", "content": "[stowage: old output omitted] bash -> ok"}
    hidden_grep = request(*TRANSCRIPT[:2], stub, *TRANSCRIPT[3:5], later[0])  # the quoting reply 5 compacted away

    chained = HiddenUseTracker(messages, starts=[len(TRANSCRIPT)])
    one_agent = HiddenUseTracker(messages)
    for tracker in (chained, one_agent):
        for k in (1, 3, 5):
            tracker.event("request", request=request(*TRANSCRIPT[:k]))
        tracker.event("request", request=hidden_grep)
    assert one_agent.figures().needed_while_hidden == 1  # read_frame, quoted by the one agent that saw the grep
    assert chained.figures().needed_while_hidden == 0
    assert chained.figures().used_later == 1  # the first agent's own use (request 2, grep verbatim) still counts


def test_common_vocabulary_is_no_evidence_of_use():
    transcripts = [
        [{"role": "tool", "tool_call_id": "x", "content": f"settings.INSTALLED_APPS and unique_{n}_name"}]
        for n in range(4)
    ]
    assert common_tokens(transcripts, share=0.5, floor=3) == {"settings.INSTALLED_APPS", "INSTALLED_APPS"}
    assert common_tokens(transcripts[:2], share=0.5, floor=3) == frozenset()

    tracker = HiddenUseTracker(TRANSCRIPT, common=frozenset({"read_frame", "src/net/frames.py"}))
    stub = {"role": "tool", "tool_call_id": "c1", "content": "[stowage: old output omitted] bash -> ok"}
    tracker.event("request", request=request(TRANSCRIPT[0]))
    tracker.event("request", request=request(*TRANSCRIPT[:3]))
    tracker.event("request", request=request(*TRANSCRIPT[:2], stub, TRANSCRIPT[3], TRANSCRIPT[4]))
    assert tracker.figures().needed_while_hidden == 0 and tracker.figures().used_later == 0


def test_gaps_and_examples_follow_the_transcript_whatever_the_hash_order():
    """One answer quoting eight outputs hidden for different spans: the gaps come in transcript order.

    The outputs an answer quotes are found through a set, whose order changes with the process's hash
    seed; the bench JSON must not (``hidden.gaps`` was reordered from run to run).
    """
    outputs = 8
    transcript: list[dict[str, Any]] = [{"role": "user", "content": "Trace the handlers."}]
    for i in range(outputs):
        transcript.append({"role": "assistant", "content": "Next.", "tool_calls": [call(f"c{i}", f"cat m{i}")]})
        transcript.append({"role": "tool", "tool_call_id": f"c{i}", "content": f"def handler_number_{i}(event):"})
    quoting = " ".join(f"handler_number_{i}" for i in reversed(range(outputs)))
    transcript.append({"role": "assistant", "content": f"All of them: {quoting}."})
    tracker = HiddenUseTracker(transcript)
    for k in range(outputs + 1):
        upto = transcript[: 1 + 2 * k]  # everything before the k-th assistant message
        last = k == outputs
        kept = [m for m in upto if m["role"] != "tool" or (not last and int(m["tool_call_id"][1:]) >= k - 1)]
        tracker.event("request", request=request(*kept))
    figures = tracker.figures()
    assert figures.needed_while_hidden == outputs
    assert figures.gaps == [6, 5, 4, 3, 2, 1, 0, 0]
    assert [example["quoted"] for example in figures.examples] == [
        "handler_number_0",
        "handler_number_1",
        "handler_number_2",
    ]


def test_each_case_says_whether_it_was_stubbed_folded_into_a_collapse_line_or_compacted_away():
    """``where`` splits "absent": a collapse line naming the output's call, or gone with a compaction."""
    from stowage.context_engine.view.collapse import COLLAPSE_MARK

    def needed_where(third: dict[str, Any]) -> str:
        tracker = HiddenUseTracker(TRANSCRIPT)
        tracker.event("request", request=request(TRANSCRIPT[0]))
        tracker.event("request", request=request(*TRANSCRIPT[:3]))
        tracker.event("request", request=request(TRANSCRIPT[0], third, TRANSCRIPT[3], TRANSCRIPT[4]))
        (case,) = tracker.figures().cases
        assert case["call_id"] == "c1" and case["chars"] == len(TRANSCRIPT[2]["content"])
        return str(case["where"])

    line = f"{COLLAPSE_MARK} ...]\n1. bash: grep -rn frame src -> ok, 44 chars, handle 0123456789abcdef\n[end]"
    assert needed_where({"role": "assistant", "content": line}) == "collapsed"
    assert needed_where({"role": "user", "content": "[CONTEXT SUMMARY] work happened"}) == "compacted"
    other = f"{COLLAPSE_MARK} ...]\n1. bash: ls -> README\n[end]"  # a collapse line, but of other steps
    assert needed_where({"role": "assistant", "content": other}) == "compacted"
