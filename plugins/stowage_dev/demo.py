"""The main job: a real Hermes Agent session with Stowage, offline.

Starts a scripted OpenAI-compatible model on 127.0.0.1, a throw-away
HERMES_HOME selecting Stowage, and drives a real ``AIAgent`` of hermes-agent
0.19.0 through a small debugging session that exercises all three jobs:

1. spill: the model reads a huge build log with the real ``read_file`` tool;
   Stowage stores it and the model sees a preview, then greps it with
   ``stowage_fetch``;
2. compaction: more logs are read, the provider reports a near-full window
   (the FIX turn), so Stowage compacts at once: prunes, summarizes and
   sanitizes; then ``/compress <focus>`` forces a second one;
3. tool search: 60 plugin tools are deferred behind the bridges; the model
   finds one with ``stowage_tool_search`` and runs it with ``stowage_tool_call``.

Prints what Stowage did at each step, why each compaction happened, and one
savings figure: the one ``stowage status`` prints and the dashboard tab
shows for the same session (read back from both sources).  Then it runs the
same scripted session through Hermes's built-in compressor and compares the
two sessions' requests and summary calls, measured on the requests the model
server received (tiktoken, o200k_base).

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
WINDOW = 128_000  # the scripted model's context window (the harness's Hermes home)
# What the provider reports for the FIX turn's request: a long real session gets there. Over the trigger and over
# policy.rules.AWAIT_CEILING (0.85) of the window, so Stowage compacts at once: under that ceiling, a request over
# the trigger may go on while the summary is written ahead, and the compaction comes later.
FIX_PROMPT_TOKENS = 112_000
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


NIGHTLY_ANSWER = "The nightly build fails in test_parser (line 1204 of the log): expected 3, got 4."
NOTE_ANSWER = "Posted the note through the echo tool."


def script(fake_llm: FakeLLMServer, *, stowage: bool = True) -> None:
    """The model's side of the session; without Stowage it does the same work with the host's own tools."""
    # 1. spill: a 1,800-line log, then a grep through the handle in the preview
    fake_llm.on(
        Match.user_turn("NIGHTLY"),
        Reply.tool(ToolCall("read_file", {"path": "logs/nightly-full.log", "limit": 10000}, id="call_nightly")),
    )
    if stowage:
        fake_llm.on(
            Match.after_tool_result("call_nightly"),
            lambda request: Reply.tool(
                ToolCall(
                    "stowage_fetch",
                    {
                        "handle": _handle(request.tool_results["call_nightly"]),
                        "mode": "grep",
                        "pattern": "FAILED",
                        "context": 1,
                    },
                    id="call_grep",
                )
            ),
        )
        fake_llm.on(Match.after_tool_result("call_grep"), Reply.say(NIGHTLY_ANSWER))
    else:  # the whole log is in the context: the model reads the line off it
        fake_llm.on(Match.after_tool_result("call_nightly"), Reply.say(NIGHTLY_ANSWER))
    # 3. tool search: find a tool among the deferred ones and run it
    if stowage:
        fake_llm.on(
            Match.user_turn("TOOLS"),
            Reply.tool(ToolCall("stowage_tool_search", {"query": "echo text back"}, id="call_search")),
        )
        fake_llm.on(
            Match.after_tool_result("call_search"),
            Reply.tool(
                ToolCall(
                    "stowage_tool_call",
                    {"name": "harness_echo", "arguments": {"text": "parser fixed"}},
                    id="call_bridge",
                )
            ),
        )
        fake_llm.on(Match.after_tool_result("call_bridge"), Reply.say(NOTE_ANSWER))
    else:  # every schema is in every request: the model calls the tool directly
        fake_llm.on(
            Match.user_turn("TOOLS"), Reply.tool(ToolCall("harness_echo", {"text": "parser fixed"}, id="call_bridge"))
        )
        fake_llm.on(Match.after_tool_result("call_bridge"), Reply.say(NOTE_ANSWER))
    # 2. compaction
    for run in range(LOG_FILES):
        call_id = f"call_log_{run}"
        fake_llm.on(
            Match.user_turn(f"LOG-{run} "),
            Reply.tool(ToolCall("read_file", {"path": f"logs/build-{run}.log"}, id=call_id)),
        )
        fake_llm.on(
            Match.after_tool_result(call_id),
            Reply.say(f"Run {run}: the build fails in test_parser (expected 3, got 4)."),
        )
    # The provider reports a near-full window on this turn's tool call.
    fake_llm.on(
        Match.user_turn("FIX"),
        Reply.tool(
            ToolCall("read_file", {"path": "logs/build-0.log", "limit": 20}, id="call_fix"),
            usage={"prompt_tokens": FIX_PROMPT_TOKENS},
        ),
    )
    fake_llm.on(Match.after_tool_result("call_fix"), Reply.say("I will patch the loop bound in src/parser/tokens.py."))
    fake_llm.on(
        Match.user_turn("What is the next step"),
        Reply.say("Re-run the parser tests once the loop bound is patched."),
        times=None,
    )
    fake_llm.on(Match.summary_request(), Reply.say(SUMMARY_REPLY), times=None)


def why_compacted(entry: dict[str, Any], threshold: int) -> str:
    """Why this compaction happened, in the terms of the session's figures."""
    from stowage.context_engine.policy.rules import AWAIT_CEILING

    if entry.get("forced"):
        focus = f" with focus {entry['focus_topic']!r}" if entry.get("focus_topic") else ""
        return f"you typed /compress{focus}: a forced compaction runs whatever the request's size"
    before = entry.get("tokens_before") or 0
    if before > AWAIT_CEILING * WINDOW:
        return (
            f"automatic: the provider reported {before:,} prompt tokens for the FIX turn's request (scripted, as a "
            f"long real session would reach), over the trigger of {threshold:,} and over {AWAIT_CEILING:.0%} of the "
            f"{WINDOW:,}-token window, so Stowage compacted at once instead of letting the turn go on while a "
            "summary is written ahead"
        )
    return f"automatic: the request reached {before:,} tokens, over the trigger of {threshold:,}"


def describe_compaction(entry: dict[str, Any], threshold: int) -> None:
    before, after = entry.get("tokens_before"), entry.get("tokens_after")
    _line(f"  {entry['result']}")
    _line(
        textwrap.fill(f"why: {why_compacted(entry, threshold)}", 100, initial_indent="    ", subsequent_indent="      ")
    )
    sizes = (
        f"; request ~{before:,} -> ~{after:,} tokens (Hermes's estimate, system prompt and tools included)"
        if before and after and entry.get("forced")
        else ""
    )  # the automatic one starts from the scripted figure
    _line(f"    history: {entry['messages_before']} -> {entry['messages_after']} messages{sizes}")
    _line(
        f"    {entry['window_messages']} messages ({entry['window_tool_outputs']} tool outputs) went into a "
        f"{entry['summary_chars']:,}-char summary and are stored whole under a handle"
        + (f"; {entry['pruned_outputs']} older output(s) became stubs" if entry.get("pruned_outputs") else "")
    )
    if entry.get("summary_error"):
        _line(f"    the summary model failed ({entry['summary_error']}): a fallback summary took its place")


def scenario_for(stowage: bool) -> Scenario:
    scenario = Scenario()
    scenario.turn("NIGHTLY read logs/nightly-full.log and find the failure", id="nightly")
    for run in range(LOG_FILES):
        scenario.turn(f"LOG-{run} read logs/build-{run}.log and tell me what failed", id=f"log{run}")
    scenario.turn("FIX the parser bug now", id="fix")
    scenario.turn("What is the next step?", id="next")
    scenario.compress(focus="parser bug", id="manual")
    scenario.turn("TOOLS: post a note that the parser is fixed", id="tools")
    if stowage:
        scenario.probe("state.compaction_log", id="final")
    return scenario


def run_session(workspace: Path, *, stowage: bool) -> tuple[Any, FakeLLMServer, HermesHome]:
    """The scripted session through Stowage or through Hermes's built-in compressor (a fresh home and server)."""
    fake_llm = FakeLLMServer().start()
    extra: dict[str, Any] = {"auxiliary": {"transient_retries": 0}}
    if stowage:
        extra["stowage"] = {
            "compaction": {"target_ratio": 0.05, "protect_last_n": 4},
            "tool_search": {"enabled": "auto", "threshold_pct": 2},
        }
    home = HermesHome(
        root=workspace / ("stowage-home" if stowage else "builtin-home"),
        base_url=fake_llm.base_url,
        engine="stowage" if stowage else "compressor",
        plugins_enabled=["stowage"] if stowage else [],
        extra_config=extra,
    )
    home.install_harness_probe()  # a plugin with 60 extra tools, to be deferred
    write_logs(home.work_dir)
    script(fake_llm, stowage=stowage)
    result = run_scenario(home, scenario_for(stowage), env={"HARNESS_PROBE_DUMMY_TOOLS": "60"})
    return result, fake_llm, home


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Stowage offline demo session")
    parser.add_argument("--keep", action="store_true", help="keep the temporary Hermes homes and print their path")
    args = parser.parse_args(argv)
    workspace = Path(tempfile.mkdtemp(prefix="stowage-demo-"))
    servers: list[FakeLLMServer] = []
    try:
        _line("Stowage demo: a real Hermes Agent session, offline (a scripted model on 127.0.0.1)")
        _line("  running the session with Stowage ...")
        result, fake_llm, home = run_session(workspace, stowage=True)
        servers.append(fake_llm)
        status = report(result, fake_llm, home)
        if status:
            return status
        _line("\n  running the same session with Hermes's built-in compressor, to compare ...")
        builtin, builtin_llm, _ = run_session(workspace, stowage=False)
        servers.append(builtin_llm)
        if not builtin.ok:
            _line("The built-in compressor's session failed: " + json.dumps(builtin.report.get("error"), indent=2))
            return 1
        compare(result, fake_llm, builtin_llm)
        return 0
    finally:
        for server in servers:
            server.stop()
        if args.keep:
            _line(f"\n(kept {workspace})")
        else:
            shutil.rmtree(workspace, ignore_errors=True)


def saved_elsewhere(home: HermesHome) -> list[tuple[str, str]]:
    """The saved figure as ``stowage status`` prints it and as the dashboard tab shows it, for this Hermes home."""
    import re
    import subprocess
    import sys

    from stowage.command.live import saved_tokens
    from stowage.context_engine.records.session_status import SessionStatus

    out: list[tuple[str, str]] = []
    cli = Path(sys.executable).with_name("stowage")
    env = {k: v for k, v in home.env().items() if k != "PYTHONPATH"}
    try:
        shown = subprocess.run(
            [str(cli), "status"], env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        shown = f"(could not run: {exc})"
    found = re.search(r"[\d,]+ tokens saved over \d+ requests", shown)
    out.append(("`stowage status` prints", found.group(0) if found else "no saved figure: " + shown.strip()[:200]))
    # the dashboard tab's "tokens saved": its API reads the session's status file with the same function
    files = sorted((home.path / "stowage" / "session-status").glob("*.json"), key=lambda p: p.stat().st_mtime)
    if files:
        status = SessionStatus.from_dict(json.loads(files[-1].read_text(encoding="utf-8")))
        out.append(("the dashboard tab shows", f"tokens saved {saved_tokens(status):,}"))
    return out


def report(result: Any, fake_llm: FakeLLMServer, home: HermesHome) -> int:
    from stowage.command.live import saved_text
    from stowage.context_engine.policy.trigger import trigger_text
    from stowage.context_engine.records.session_status import SessionStatus

    if os.environ.get("STOWAGE_DEMO_DEBUG"):
        for request in fake_llm.chat_requests():
            _line(
                f"  debug: #{request.index} main={request.is_main} last_user={str(request.last_user_text)[:40]!r} "
                f"last_role={request.roles[-1] if request.roles else None} rule={request.rule}"
            )
    if not result.ok:
        _line("The session failed: " + json.dumps(result.report.get("error"), indent=2))
        return 1
    engine = result.engine
    if engine["is_builtin"]:
        _line(
            "  Stowage is NOT running: Hermes fell back to its built-in compressor (check context.engine and "
            "plugins.enabled; `stowage doctor` says which)"
        )
        return 1
    source = {"entrypoint": "the pip entry point", "user": "a user plugin folder"}.get(
        result.plugin("stowage")["source"], result.plugin("stowage")["source"]
    )
    _line(f"  Hermes runs Stowage as its context engine (plugin loaded from {source})")
    _section("Session")
    for step in result.steps:
        if step.get("op") == "turn":
            text = (step.get("final_response") or "").replace("\n", " ")
            _line(f"  [{step['id']:>6}] assistant: {text[:90]}")
        elif step.get("op") == "compress":
            _line(
                f"  [{step['id']:>6}] /compress parser bug: {step['messages_before']} -> {step['messages_after']} "
                "messages"
            )
    _section("1. Spill: a 1,800-line log never entered the context")
    spill_request = fake_llm.matching(Match.after_tool_result("call_nightly"))[0]
    preview = spill_request.tool_results["call_nightly"]
    _line(f"  the model saw {len(preview):,} chars instead of the whole output; first lines of what it saw:")
    _line(textwrap.indent("\n".join(preview.splitlines()[:6]), "  | ", predicate=lambda _: True))
    grep_reply = json.loads(fake_llm.matching(Match.after_tool_result("call_grep"))[0].tool_results["call_grep"])
    _line(
        f"  then stowage_fetch(mode=grep, pattern=FAILED): {grep_reply.get('matches')} match in "
        f"{grep_reply.get('scanned_lines'):,} lines:"
    )
    _line(textwrap.indent(grep_reply.get("text", ""), "  | "))
    status = result.step("final")["engine"]["status"]
    _section("2. Compaction")
    why = trigger_text(status.get("trigger") or {})
    _line(f"  trigger: a request of {status['threshold_tokens']:,} tokens" + (f" ({why})" if why else ""))
    log = result.step("final")["engine"]["attrs"].get("state.compaction_log") or []
    _line(
        f"  this short scripted session stays far below it on its own, so for the FIX turn the scripted model "
        f"reports {FIX_PROMPT_TOKENS:,} prompt tokens; {len(log)} compaction(s) in all:"
    )
    for number, entry in enumerate(log, 1):
        _line(f"\n  compaction {number}:")
        describe_compaction(entry, status["threshold_tokens"])
    summaries = fake_llm.summary_requests()
    updates = sum(1 for r in summaries if "PREVIOUS SUMMARY" in r.messages[0]["content"])
    _line(
        f"\n  the summary model was called {len(summaries)} time(s)"
        + (f"; {updates} call(s) updated the previous summary instead of nesting it" if updates else "")
    )
    final = fake_llm.last_main_request()
    summary = next((m for m in final.messages if "STOWAGE CONTEXT SUMMARY" in json.dumps(m)), None)
    _section("What the model sees now (summary message, first lines)")
    if summary:
        body = summary["content"] if isinstance(summary["content"], str) else json.dumps(summary["content"])
        _line(textwrap.indent("\n".join(body.splitlines()[:16]), "  | ", predicate=lambda _: True))
    _section("3. What Stowage saved in this session (one figure)")
    _line(f"  {saved_text(SessionStatus.from_dict(status))}")
    _line(
        "  (the messages of each request against the same history unshaped, every spilled output whole; "
        "system prompt and tool schemas are the same either way and not counted)"
    )
    for source, figure in saved_elsewhere(home):
        _line(f"  {source}: {figure}")
    stubs = [
        m
        for m in final.messages
        if m.get("role") == "tool" and str(m.get("content")).startswith("[stowage: old output")
    ]
    if stubs:
        _line(f"  {len(stubs)} older output(s) went as one line each, e.g.:")
        _line(f"  | {stubs[0]['content']}")
    _section("4. Tool search")
    search_request = fake_llm.matching(Match.after_tool_result("call_search"))[0]
    ts = status["tool_search"]
    _line(
        f"  {ts['deferred']} tool schemas deferred ({ts['reason']}); the request offered "
        f"{len(search_request.tool_names)} tools, bridges included"
    )
    hits = json.loads(search_request.tool_results["call_search"]).get("matches", [])
    _line("  stowage_tool_search('echo text back') -> " + ", ".join(f"{h['name']} ({h['score']})" for h in hits[:3]))
    bridged = fake_llm.matching(Match.after_tool_result("call_bridge"))[0].tool_results["call_bridge"]
    _line(f"  stowage_tool_call(harness_echo) ran through Hermes's normal dispatch -> {bridged}")
    warnings = result.warnings()
    if warnings:
        _line(f"\n  Hermes warned: {warnings}")
    return 0


def measured(fake_llm: FakeLLMServer) -> dict[str, int]:
    """What the model server received: prompt tokens (system prompt, messages, tool schemas) and summary calls."""
    from stowage.context_engine.chat.tokens import TokenCounter

    counter = TokenCounter("o200k_base")
    sizes = [
        sum(map(counter.count_message, r.messages)) + (counter.count_text(json.dumps(r.tools)) if r.tools else 0)
        for r in fake_llm.main_requests()
    ]
    summaries = fake_llm.summary_requests()
    return {
        "requests": len(sizes),
        "prompt_tokens": sum(sizes),
        "largest": max(sizes, default=0),
        "summary_calls": len(summaries),
        "summary_tokens": sum(sum(map(counter.count_message, r.messages)) for r in summaries),
    }


def compare(result: Any, stowage_llm: FakeLLMServer, builtin_llm: FakeLLMServer) -> None:
    ours, theirs = measured(stowage_llm), measured(builtin_llm)
    _section("Stowage vs Hermes's built-in compressor, the same scripted session")
    _line(
        "  (the built-in runs its own session: another history, so no second savings figure; what each sent, whole "
        "requests with system prompt and tool schemas)"
    )
    _line(f"  {'':34}{'Stowage':>12}{'built-in':>12}")
    for key, label in (
        ("requests", "requests to the model"),
        ("largest", "largest request, tokens"),
        ("summary_calls", "summary calls"),
        ("summary_tokens", "tokens sent to the summary model"),
    ):
        _line(f"  {label:34}{ours[key]:>12,}{theirs[key]:>12,}")
    extra = ours["requests"] - theirs["requests"]
    if extra > 0:
        # stowage_tool_call stands in for a call the built-in session makes directly: no extra round trip
        reads = sorted(stowage_tool_calls(stowage_llm) - {"stowage_tool_call"})
        _line(
            f"  Stowage's session made {extra} more request(s): the model called {' and '.join(reads)}, "
            "reading back a stored output and looking up a deferred tool; each such call is one more round trip"
        )
    _line(
        "  (whole requests, counted with tiktoken o200k_base as the model server received them; the built-in reads "
        "the whole log into its context where Stowage spills it, and offers all 66 tool schemas in every request)"
    )


def stowage_tool_calls(fake_llm: FakeLLMServer) -> set[str]:
    """Names of Stowage's own tools the model called in this session (each adds a round trip)."""
    names = set()
    for request in fake_llm.main_requests():
        for message in request.messages:
            for call in message.get("tool_calls") or []:
                name = (call.get("function") or {}).get("name", "")
                if name.startswith("stowage_"):
                    names.add(name)
    return names


def result_home_events(result: Any) -> list[dict[str, Any]]:
    return getattr(result, "home_events", [])


if __name__ == "__main__":
    raise SystemExit(main())
