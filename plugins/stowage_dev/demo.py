"""The main job: a real Hermes Agent session with Stowage, offline.

Starts a scripted OpenAI-compatible model on 127.0.0.1, a throw-away
HERMES_HOME selecting Stowage, and drives a real ``AIAgent`` of hermes-agent
0.19.0 through a small debugging session that exercises all three jobs:

1. spill: the model reads a huge build log with the real ``read_file`` tool;
   Stowage stores it and the model sees a preview, then greps it with
   ``stowage_fetch``;
2. compaction: more logs are read, the provider reports a near-full window,
   Stowage prunes, summarizes and sanitizes; then ``/compress <focus>``;
3. tool search: 60 plugin tools are deferred behind the bridges; the model
   finds one with ``stowage_tool_search`` and runs it with ``stowage_tool_call``.

Prints what Stowage did at each step.

Run it with ``python3 run.py demo`` (sets up .venv first), which runs
``python -m stowage_dev.demo``: an example of driving Hermes with the harness.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from .fake_llm import FakeLLMServer, Match, Reply, ToolCall
from .hermes_home import HermesHome
from .runner import Scenario, run_scenario

LOG_FILES = 5
SUMMARY_REPLY = """## Goal
Find why the nightly build fails and fix it.

## Constraints & Preferences
- Do not touch the vendored parser.

## Progress
### Done
- Read build logs 0-4: every run fails in test_parser with AssertionError (expected 3, got 4).
### In Progress
- Locating the off-by-one in src/parser/tokens.py.
### Blocked
- none

## Key Decisions
- Fix the tokenizer, not the test.

## Relevant Files
- logs/build-*.log: nightly build output
- src/parser/tokens.py: suspected off-by-one

## Next Steps
1. Patch the loop bound in src/parser/tokens.py.
2. Re-run the parser tests.

## Critical Context
- Failing assertion: expected 3, got 4"""


def _line(text: str = "") -> None:
    print(text, flush=True)


def _section(title: str) -> None:
    _line()
    _line(f"== {title} " + "=" * max(0, 66 - len(title)))


def write_logs(work_dir: Path) -> None:
    logs = work_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    for run in range(LOG_FILES):
        lines = [f"[{i:04d}] build step {i}: compiled module_{i % 37}.py in {(i * 7) % 90} ms" for i in range(150)]
        lines.insert(100, "FAILED tests/test_parser.py::test_tokens - AssertionError: expected 3, got 4")
        (logs / f"build-{run}.log").write_text("\n".join(lines) + "\n")
    full = [f"[{i:04d}] nightly: compiled module_{i % 97}.py" for i in range(1800)]
    full.insert(1203, "FAILED tests/test_parser.py::test_tokens - AssertionError: expected 3, got 4")
    (logs / "nightly-full.log").write_text("\n".join(full) + "\n")


def _handle(text: str) -> str:
    import re
    found = re.findall(r"handle: ([0-9a-f]{16,64})", text)
    return found[-1] if found else "0" * 16


def script(fake_llm: FakeLLMServer) -> None:
    # 1. spill: a 9,000-line log, then a grep through the handle in the preview
    fake_llm.on(Match.user_turn("NIGHTLY"), Reply.tool(ToolCall("read_file", {"path": "logs/nightly-full.log",
                                                                              "limit": 10000}, id="call_nightly")))
    fake_llm.on(Match.after_tool_result("call_nightly"), lambda request: Reply.tool(ToolCall(
        "stowage_fetch", {"handle": _handle(request.tool_results["call_nightly"]), "mode": "grep",
                          "pattern": "FAILED", "context": 1}, id="call_grep")))
    fake_llm.on(Match.after_tool_result("call_grep"),
                Reply.say("The nightly build fails in test_parser (line 1204 of the log): expected 3, got 4."))
    # 3. tool search: find a tool among the deferred ones and run it
    fake_llm.on(Match.user_turn("TOOLS"), Reply.tool(ToolCall("stowage_tool_search", {"query": "echo text back"},
                                                              id="call_search")))
    fake_llm.on(Match.after_tool_result("call_search"), Reply.tool(ToolCall(
        "stowage_tool_call", {"name": "harness_echo", "arguments": {"text": "parser fixed"}}, id="call_bridge")))
    fake_llm.on(Match.after_tool_result("call_bridge"), Reply.say("Posted the note through the echo tool."))
    # 2. compaction
    for run in range(LOG_FILES):
        call_id = f"call_log_{run}"
        fake_llm.on(Match.user_turn(f"LOG-{run} "), Reply.tool(ToolCall("read_file", {"path": f"logs/build-{run}.log"},
                                                                       id=call_id)))
        fake_llm.on(Match.after_tool_result(call_id),
                    Reply.say(f"Run {run}: the build fails in test_parser (expected 3, got 4)."))
    # The provider reports a near-full window on this turn's tool call.
    fake_llm.on(Match.user_turn("FIX"), Reply.tool(ToolCall("read_file", {"path": "logs/build-0.log", "limit": 20},
                                                            id="call_fix"), usage={"prompt_tokens": 100_000}))
    fake_llm.on(Match.after_tool_result("call_fix"), Reply.say("I will patch the loop bound in src/parser/tokens.py."))
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY_REPLY), times=None)


def describe_compaction(entry: dict[str, Any]) -> None:
    before, after = entry.get("tokens_before"), entry.get("tokens_after")
    _line(f"  result:            {entry['result']}" + (" (forced by /compress)" if entry.get("forced") else ""))
    _line(f"  messages:          {entry['messages_before']} -> "
          f"{entry['messages_after'] if entry['result'] not in ('no-op', 'aborted') else 'unchanged'}")
    if before and after:
        _line(f"  prompt tokens:     ~{before:,} -> ~{after:,} (new list, estimated at tiktoken's measured ratio)")
    _line(f"  phase 1 prune:     {entry['pruned_outputs']} old tool outputs staying in context -> stubs with "
          f"retrieval handles, {entry['images_removed']} images, {entry['arguments_shrunk']} oversized arguments")
    _line(f"  phase 2 window:    {entry['window_messages']} messages summarized ({entry['window_tool_outputs']} tool "
          "outputs, stored whole with the window); tool calls kept with their results")
    _line(f"  phase 3 summary:   {entry['summary_chars']} chars" + (f", focus {entry['focus_topic']!r}" if entry.get(
        "focus_topic") else "") + (f", model failed: {entry['summary_error']}" if entry.get("summary_error") else ""))
    _line("  phase 4 sanitize:  the list passed the strict provider check")
    _line("  time per phase:    " + ", ".join(f"{k} {v:.1f} ms" for k, v in entry["phase_ms"].items())
          + " (summary includes the model call)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Stowage offline demo session")
    parser.add_argument("--keep", action="store_true", help="keep the temporary HERMES_HOME and print its path")
    args = parser.parse_args(argv)
    workspace = Path(tempfile.mkdtemp(prefix="stowage-demo-"))
    try:
        with FakeLLMServer() as fake_llm:
            home = HermesHome(root=workspace / "hermes-home", base_url=fake_llm.base_url, engine="stowage",
                              plugins_enabled=["stowage"], extra_config={
                                  "stowage": {"compaction": {"target_ratio": 0.05, "protect_last_n": 4},
                                              "tool_search": {"enabled": "auto", "threshold_pct": 2}},
                                  "auxiliary": {"transient_retries": 0}})
            home.install_harness_probe()  # a plugin with 60 extra tools, to be deferred
            write_logs(home.work_dir)
            script(fake_llm)
            scenario = Scenario()
            scenario.turn("NIGHTLY read logs/nightly-full.log and find the failure", id="nightly")
            scenario.probe(id="after_spill")
            for run in range(LOG_FILES):
                scenario.turn(f"LOG-{run} read logs/build-{run}.log and tell me what failed", id=f"log{run}")
            scenario.turn("FIX the parser bug now", id="fix")
            scenario.turn("What is the next step?", id="next")
            scenario.compress(focus="parser bug", id="manual")
            scenario.turn("TOOLS: post a note that the parser is fixed", id="tools")
            scenario.probe("compaction_log", id="final")
            _line("Stowage demo: a real Hermes Agent session, offline")
            _line(f"  model: scripted OpenAI-compatible server at {fake_llm.base_url} (streams SSE)")
            _line(f"  HERMES_HOME: {home.root}")
            result = run_scenario(home, scenario, env={"HARNESS_PROBE_DUMMY_TOOLS": "60"})
            result.home_events = home.probe_events() if result.ok else []
            return report(result, fake_llm)
    finally:
        if args.keep:
            _line(f"\n(kept {workspace})")
        else:
            shutil.rmtree(workspace, ignore_errors=True)


def report(result: Any, fake_llm: FakeLLMServer) -> int:
    if os.environ.get("STOWAGE_DEMO_DEBUG"):
        for request in fake_llm.chat_requests():
            _line(f"  debug: #{request.index} main={request.is_main} last_user={str(request.last_user_text)[:40]!r} "
                  f"last_role={request.roles[-1] if request.roles else None} rule={request.rule}")
    if not result.ok:
        _line("The session failed: " + json.dumps(result.report.get("error"), indent=2))
        return 1
    engine = result.engine
    _section("Engine")
    _line(f"  context engine: {engine['class']} from {engine['module']} (name {engine['name']!r})")
    _line(f"  plugin source:  {result.plugin('stowage')['source']}; built-in compressor in use: {engine['is_builtin']}")
    if engine["is_builtin"]:
        _line("  Stowage is NOT running: check context.engine and plugins.enabled")
        return 1
    _section("Session")
    for step in result.steps:
        if step.get("op") == "turn":
            text = (step.get("final_response") or "").replace("\n", " ")
            _line(f"  [{step['id']:>6}] assistant: {text[:90]}")
        elif step.get("op") == "compress":
            _line(f"  [{step['id']:>6}] /compress parser bug -> {step['messages_before']} -> {step['messages_after']} messages")
    _section("1. Spill: a 1,800-line log never entered the context")
    spill_request = fake_llm.matching(Match.after_tool_result("call_nightly"))[0]
    preview = spill_request.tool_results["call_nightly"]
    _line(f"  the model saw {len(preview):,} chars instead of the whole output; first lines of what it saw:")
    _line(textwrap.indent("\n".join(preview.splitlines()[:6]), "  | ", predicate=lambda _: True))
    grep_reply = json.loads(fake_llm.matching(Match.after_tool_result("call_grep"))[0].tool_results["call_grep"])
    _line(f"  then stowage_fetch(mode=grep, pattern=FAILED): {grep_reply.get('matches')} match in "
          f"{grep_reply.get('scanned_lines'):,} lines:")
    _line(textwrap.indent(grep_reply.get("text", ""), "  | "))
    status = result.step("final")["engine"]["status"]
    _section("2. Compaction")
    _line(f"  tokenizer {status['tokenizer']}, window {status['context_length']:,} tokens, "
          f"threshold {status['threshold_tokens']:,}, tail budget {status['tail_budget_tokens']:,}")
    log = result.step("final")["engine"]["attrs"].get("compaction_log") or []
    for number, entry in enumerate(log, 1):
        _line(f"\n  compaction {number}:")
        describe_compaction(entry)
    summaries = fake_llm.summary_requests()
    _section("Summary requests sent to the auxiliary model")
    for request in summaries:
        prompt = request.messages[0]["content"]
        flags = [name for name, present in (("iterative update", "PREVIOUS SUMMARY" in prompt),
                                            ("focus topic", "FOCUS TOPIC" in prompt)) if present]
        _line(f"  {len(prompt):,} chars, non-streaming, one user message" + (f"; {', '.join(flags)}" if flags else ""))
    final = fake_llm.last_main_request()
    summary = next((m for m in final.messages if "STOWAGE CONTEXT SUMMARY" in json.dumps(m)), None)
    _section("What the model sees now (summary message, first lines)")
    if summary:
        body = summary["content"] if isinstance(summary["content"], str) else json.dumps(summary["content"])
        _line(textwrap.indent("\n".join(body.splitlines()[:16]), "  | ", predicate=lambda _: True))
    _section("3. Lean requests: what each request carried")
    view = status.get("view") or {}
    last = view.get("last_request") or {}
    stubs = [m for m in final.messages if m.get("role") == "tool" and str(m.get("content")).startswith("[stowage: old output")]
    _line(f"  {view.get('requests', 0)} requests; the view left out {view.get('tokens_saved', 0):,} tokens in all "
          f"(last request: {last.get('sent_tokens', 0):,} sent of {last.get('full_tokens', 0):,}); "
          f"{view.get('steps', 0)} step(s) broke the prompt cache, {last.get('pinned', 0)} output(s) pinned")
    if stubs:
        _line(f"  {len(stubs)} older output(s) went as one line each, e.g.:")
        _line(f"  | {stubs[0]['content']}")
    _section("4. Tool search")
    search_request = fake_llm.matching(Match.after_tool_result("call_search"))[0]
    ts = status["tool_search"]
    _line(f"  {ts['deferred']} tool schemas deferred ({ts['reason']}); the request offered "
          f"{len(search_request.tool_names)} tools, bridges included")
    hits = json.loads(search_request.tool_results["call_search"]).get("matches", [])
    _line("  stowage_tool_search('echo text back') -> " + ", ".join(f"{h['name']} ({h['score']})" for h in hits[:3]))
    bridged = fake_llm.matching(Match.after_tool_result("call_bridge"))[0].tool_results["call_bridge"]
    _line(f"  stowage_tool_call(harness_echo) ran through Hermes's normal dispatch -> {bridged}")
    hooks = [e for e in result_home_events(result) if e.get("tool_name") == "harness_echo"]
    _line(f"  plugin hooks saw the real tool: {sorted({e['hook'] for e in hooks}) or 'n/a'}")
    _line(f"\n  last request: {len(final.messages)} messages, roles {' '.join(m['role'][0] for m in final.messages)}")
    warnings = result.warnings()
    _line(f"  host warnings: {warnings or 'none'}")
    return 0


def result_home_events(result: Any) -> list[dict[str, Any]]:
    return getattr(result, "home_events", [])


if __name__ == "__main__":
    raise SystemExit(main())
