"""The main job: a real Hermes Agent session with Stowage, offline.

Starts a scripted OpenAI-compatible model on 127.0.0.1, a throw-away
HERMES_HOME selecting Stowage, and drives a real ``AIAgent`` of hermes-agent
0.19.0 through a small coding session: the model reads build logs with the
real ``read_file`` tool, the context crosses the threshold, Stowage compacts,
then the user runs ``/compress <focus>``.  Prints what Stowage did.

Run it with ``python3 tests/run.py demo`` (sets up .venv first).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.harness.fake_llm import FakeLLMServer, Match, Reply, ToolCall  # noqa: E402
from tests.harness.hermes_home import HermesHome  # noqa: E402
from tests.harness.runner import Scenario, run_scenario  # noqa: E402

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
        lines = [f"[{i:04d}] build step {i}: compiled module_{i % 37}.py in {(i * 7) % 90} ms" for i in range(420)]
        lines.insert(300, "FAILED tests/test_parser.py::test_tokens - AssertionError: expected 3, got 4")
        (logs / f"build-{run}.log").write_text("\n".join(lines) + "\n")


def script(fake_llm: FakeLLMServer) -> None:
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
        _line(f"  prompt tokens:     ~{before:,} -> ~{after:,} (tiktoken count of the new list)")
    _line(f"  phase 1 prune:     {entry['pruned_outputs']} old tool outputs -> informative stubs, "
          f"{entry['images_removed']} images, {entry['arguments_shrunk']} oversized arguments")
    _line(f"  phase 2 window:    {entry['window_messages']} messages summarized; tool calls kept with their results")
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
                                  "stowage": {"compaction": {"target_ratio": 0.05, "protect_last_n": 4}},
                                  "auxiliary": {"transient_retries": 0}})
            write_logs(home.work_dir)
            script(fake_llm)
            scenario = Scenario()
            for run in range(LOG_FILES):
                scenario.turn(f"LOG-{run} read logs/build-{run}.log and tell me what failed", id=f"log{run}")
            scenario.turn("FIX the parser bug now", id="fix")
            scenario.turn("What is the next step?", id="next")
            scenario.compress(focus="parser bug", id="manual")
            scenario.turn("Go ahead.", id="go")
            scenario.probe("compaction_log", id="final")
            _line("Stowage demo: a real Hermes Agent session, offline")
            _line(f"  model: scripted OpenAI-compatible server at {fake_llm.base_url} (streams SSE)")
            _line(f"  HERMES_HOME: {home.root}")
            result = run_scenario(home, scenario)
            return report(result, fake_llm)
    finally:
        if args.keep:
            _line(f"\n(kept {workspace})")
        else:
            shutil.rmtree(workspace, ignore_errors=True)


def report(result: Any, fake_llm: FakeLLMServer) -> int:
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
    status = result.step("final")["engine"]["status"]
    _section("What Stowage did")
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
    _line(f"\n  last request: {len(final.messages)} messages, roles {' '.join(m['role'][0] for m in final.messages)}")
    warnings = result.warnings()
    _line(f"  host warnings: {warnings or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
