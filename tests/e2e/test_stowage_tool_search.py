"""Tool search end to end: real MCP tool lists, a real ``AIAgent``, the scripted model.

The catalog is what twelve npm MCP reference servers answer to ``tools/list``
(captured once per test session over stdio, see ``plugins/stowage_dev/mcp_catalog.py``),
registered as plain plugin tools by the ``mcp_catalog`` test plugin, so every
scenario subprocess loads ~90 real schemas without starting a server.  One
test runs the memory server through Hermes's own MCP client instead.

Scenario subprocesses cost seconds each, so the two long sessions (the main
one in ``auto`` mode, the restricted one) run once per module and several
tests read their recordings.

The servers are found through ``STOWAGE_NPM_DIR`` (``run.py`` installs
them and sets it).  Unset, the module is skipped, except under CI, where
that is a set-up error and fails.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from stowage.context_engine.chat.tokens import TokenCounter
from stowage.tool_search import BRIDGE_NAMES, CALL_NAME, DESCRIBE_NAME, SEARCH_NAME, Catalog, preselect
from stowage.tool_search.inline import BLOCK_CLOSE, BLOCK_OPEN
from stowage.tool_search.messages import message_text
from stowage_dev.embedding_server import ConceptEmbedder, EmbeddingServer
from stowage_dev.fake_llm import FakeLLMServer, Match, RecordedRequest, Reply, ToolCall
from stowage_dev.hermes_home import HARNESS_DIR, HermesHome
from stowage_dev.mcp_catalog import (
    CATALOG_ENV,
    SERVERS,
    NpmServersMissing,
    capture_catalog,
    npm_dir,
    plugin_tool_name,
    server_command,
)
from stowage_dev.runner import DriverResult, Scenario, run_scenario
from stowage_dev.tempdirs import scratch_dir

from .stowage_session import assert_valid_request

pytestmark = pytest.mark.e2e

CATALOG_PLUGIN_DIR = HARNESS_DIR / "plugins" / "mcp_catalog"
HOST_BRIDGES = ("tool_search", "tool_describe", "tool_call")
ENGINE_TOOLS = ("stowage_fetch", "stowage_grep")
# 92 real schemas are ~11.4k o200k tokens with Hermes's own deferrable tools:
# just under 10% of a 128k window (12.8k), so the auto-mode sessions use 5%.
AUTO_THRESHOLD_PCT = 5
BASE_CONFIG: dict[str, Any] = {"auxiliary": {"transient_retries": 0}, "agent": {"api_max_retries": 1}}
COUNTER = TokenCounter()


# ----------------------------------------------------------------------------- set-up
@dataclass(frozen=True)
class CapturedCatalog:
    path: Path
    data: dict[str, Any]

    @property
    def names(self) -> set[str]:
        """Every catalog tool as the plugin registers it (``<server>_<tool>``)."""
        return {
            plugin_tool_name(server, tool["name"])
            for server, info in self.data["servers"].items()
            for tool in info["tools"]
        }

    def names_of(self, server: str) -> set[str]:
        return {plugin_tool_name(server, t["name"]) for t in self.data["servers"][server]["tools"]}

    def input_schema(self, server: str, tool: str) -> dict[str, Any]:
        return next(t["inputSchema"] for t in self.data["servers"][server]["tools"] if t["name"] == tool)


@pytest.fixture(scope="session")
def npm_root() -> Path:
    """``STOWAGE_NPM_DIR``; skip when unset (fail under CI, where run.py always sets it)."""
    root = npm_dir()
    if root is None:
        reason = (
            "MCP part skipped: STOWAGE_NPM_DIR is not set, so the npm MCP reference servers are not "
            "installed (npm missing when `python3 run.py setup` ran?). Install Node.js 18+ and npm and run "
            "`python3 run.py setup`, or point STOWAGE_NPM_DIR at an npm prefix holding them"
        )
        if os.environ.get("CI"):
            pytest.fail(f"under CI the MCP servers must be installed: {reason}")
        pytest.skip(reason)
    return root


@pytest.fixture(scope="session")
def mcp_catalog(npm_root: Path, tmp_path_factory: pytest.TempPathFactory) -> CapturedCatalog:
    """Start every reference server once over stdio and capture its ``tools/list``."""
    path = tmp_path_factory.mktemp("mcp-catalog") / "catalog.json"
    try:
        data = capture_catalog(path, root=npm_root)
    except NpmServersMissing as exc:  # the dir is set, so this is a broken set-up, not a skip
        pytest.fail(str(exc))
    catalog = CapturedCatalog(path, data)
    assert len(catalog.names) >= 60, f"only {len(catalog.names)} tools captured"
    return catalog


@pytest.fixture(scope="module")
def module_tmp() -> Iterator[Path]:
    yield from scratch_dir("stowage-e2e-ts-")


def catalog_home(
    root: Path,
    base_url: str,
    tool_search: dict[str, Any],
    *,
    context_length: int = 128_000,
    config: dict[str, Any] | None = None,
    catalog: bool = True,
) -> HermesHome:
    """Stowage + the harness probe (+ the catalog plugin) with ``stowage.tool_search`` set."""
    extra = {**BASE_CONFIG, "stowage": {"tool_search": tool_search}, **(config or {})}
    home = HermesHome(
        root=root,
        base_url=base_url,
        engine="stowage",
        plugins_enabled=["stowage"],
        extra_config=extra,
        context_length=context_length,
    )
    home.install_harness_probe()
    if catalog:
        home.install_user_plugin(CATALOG_PLUGIN_DIR, mode="symlink")
        home.enable_plugins("mcp_catalog")
    return home


def run_catalog(home: HermesHome, scenario: Scenario, catalog: CapturedCatalog) -> DriverResult:
    return run_scenario(home, scenario, env={CATALOG_ENV: str(catalog.path)}, check=True)


def catalog_records(home: HermesHome, kind: str) -> list[dict[str, Any]]:
    path = home.path / "mcp_catalog_calls.jsonl"
    if not path.exists():
        return []
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["kind"] == kind]


def exact_tokens(text: str) -> int:
    """Exact o200k tokens (the counter's ``count_text`` estimates texts over 1 KB from a sample, within ~10%)."""
    return len(COUNTER.loaded.encoding.encode_ordinary(text))


def tools_tokens(tools: list[dict[str, Any]]) -> int:
    """o200k tokens of a request's ``tools`` array as compact JSON (what the provider receives)."""
    return exact_tokens(json.dumps(tools, separators=(",", ":"), ensure_ascii=False))


def bridges_of(request: RecordedRequest) -> list[dict[str, Any]]:
    return [t for t in request.tools if t["function"]["name"] in BRIDGE_NAMES]


def calls_by_id(request: RecordedRequest) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in request.tool_calls}


def assert_consistent(request: RecordedRequest) -> None:
    """Valid for strict providers, and no call in the transcript names a tool the request does not offer."""
    assert_valid_request(request)
    offered = set(request.tool_names)
    called = {c["function"]["name"] for c in request.tool_calls}
    assert called <= offered, f"transcript names tools the request does not offer: {called - offered}"


def core_tool_names() -> frozenset[str]:
    from toolsets import _HERMES_CORE_TOOLS  # the host's never-deferred set (same as the glue uses)

    return frozenset(_HERMES_CORE_TOOLS)


# ----------------------------------------------------------------------------- the main session
@dataclass
class Session:
    result: DriverResult
    llm: FakeLLMServer
    home: HermesHome

    def requests(self, step: str) -> list[RecordedRequest]:
        return [r for r in self.result.step_requests(self.llm, step) if r.is_main]

    def full_tools(self) -> list[dict[str, Any]]:
        """``agent.tools``: every schema Hermes would send without Stowage's deferral."""
        return json.loads(self.result.step("full_tools")["result"])


ISSUE_ARGS = {"owner": "octo", "repo": "demo", "title": "Login fails", "body": "The login form returns 500."}
SLACK_ARGS = {"channel_id": "C0123", "text": "deploy done"}


@pytest.fixture(scope="module")
def main_session(mcp_catalog: CapturedCatalog, module_tmp: Path) -> Iterator[Session]:
    """``auto`` at a 128k window: search -> describe -> call; a direct call; list all; the full tool list."""
    with FakeLLMServer() as llm:
        home = catalog_home(module_tmp / "main", llm.base_url, {"enabled": "auto", "threshold_pct": AUTO_THRESHOLD_PCT})
        llm.on(
            Match.user_turn("FIND-ISSUE"),
            Reply.tool(ToolCall(SEARCH_NAME, {"query": "open a new issue in a github repository"}, id="call_search")),
        )
        llm.on(
            Match.after_tool_result("call_search"),
            Reply.tool(ToolCall(DESCRIBE_NAME, {"name": "github_create_issue"}, id="call_describe")),
        )
        llm.on(
            Match.after_tool_result("call_describe"),
            Reply.tool(ToolCall(CALL_NAME, {"name": "github_create_issue", "arguments": ISSUE_ARGS}, id="call_bridge")),
        )
        llm.on(Match.after_tool_result("call_bridge"), Reply.say("issue created"))
        llm.on(
            Match.user_turn("DIRECT"), Reply.tool(ToolCall("slack_slack_post_message", SLACK_ARGS, id="call_direct"))
        )
        llm.on(Match.after_tool_result("call_direct"), Reply.say("posted"))
        llm.on(Match.user_turn("LIST-ALL"), Reply.tool(ToolCall(SEARCH_NAME, {"query": "*"}, id="call_list")))
        llm.on(Match.after_tool_result("call_list"), Reply.say("listed"))
        scenario = (
            Scenario()
            .turn("FIND-ISSUE: open an issue 'Login fails' in octo/demo on GitHub", id="issue")
            .turn("DIRECT: tell #deploys that the deploy is done", id="direct")
            .turn("LIST-ALL: which other tools do you have?", id="list")
            # as a JSON string: the report's own conversion flattens deeply nested schemas
            .python("import json\nresult = json.dumps(agent.tools)", id="full_tools")
        )
        result = run_catalog(home, scenario, mcp_catalog)
        yield Session(result, llm, home)


def test_auto_mode_defers_the_catalog_behind_three_bridges_and_shrinks_the_request(
    main_session: Session, mcp_catalog: CapturedCatalog
) -> None:
    full = main_session.full_tools()
    full_names = {t["function"]["name"] for t in full}
    assert mcp_catalog.names <= full_names  # Hermes registered every catalog tool
    first = main_session.requests("issue")[0]
    names = set(first.tool_names)

    assert set(BRIDGE_NAMES) <= names
    assert not names & mcp_catalog.names, "a deferred catalog schema is still in the request"
    assert full_names & core_tool_names() <= names, "core tools must stay visible"
    assert set(ENGINE_TOOLS) <= names
    by_name = {t["function"]["name"]: t for t in full}
    assert all(t == by_name[t["function"]["name"]] for t in first.tools if t["function"]["name"] not in BRIDGE_NAMES)
    assert {"harness_echo", "harness_big_output"}.isdisjoint(names)  # non-core plugin tools are deferred too
    status = main_session.result.step("issue")["engine"]["status"]["tool_search"]
    assert status["active"] and status["mode"] == "auto"
    assert status["deferred"] == len(full_names - names)

    before, after = tools_tokens(full), tools_tokens(first.tools)
    listing = exact_tokens(json.dumps(search_description(first).partition("\n\n")[2], ensure_ascii=False)[1:-1])
    saved = before - after
    print(
        f"\n[tool search] request tools: {len(full)} schemas, {before:,} tokens -> {len(first.tools)} schemas, "
        f"{after:,} tokens, of which {listing:,} are the deferred-tool listing; saved {saved:,} o200k tokens "
        f"({100 * saved / before:.0f}%), {saved + listing:,} without the listing"
    )
    # The listing is a budgeted trade (tokens for round trips, see the listing tests); the deferral itself
    # must still save at least 10k tokens, and the request must still shrink by a third or more.
    assert saved + listing >= 10_000 and 0 < listing <= 4000 and after < before * 2 / 3


def test_search_describe_and_call_run_the_underlying_tool_through_hermes(
    main_session: Session, mcp_catalog: CapturedCatalog
) -> None:
    llm = main_session.llm
    search = json.loads(llm.matching(Match.after_tool_result("call_search"))[0].tool_results["call_search"])
    hits = [m["name"] for m in search["matches"]]
    assert "github_create_issue" in hits, hits
    assert search["total_available"] >= len(mcp_catalog.names)

    described = json.loads(llm.matching(Match.after_tool_result("call_describe"))[0].tool_results["call_describe"])
    assert described["name"] == "github_create_issue"
    assert described["parameters"] == mcp_catalog.input_schema("github", "create_issue")  # the full schema
    assert described["source"] == "catalog-github"

    calls = catalog_records(main_session.home, "call")
    issue_calls = [c for c in calls if c["tool"] == "github_create_issue"]
    assert len(issue_calls) == 1 and issue_calls[0]["args"] == ISSUE_ARGS
    after_call = llm.matching(Match.after_tool_result("call_bridge"))[0]
    assert json.loads(after_call.tool_results["call_bridge"]) == {
        "ok": True,
        "tool": "github_create_issue",
        "echo": ISSUE_ARGS,
    }

    # Every hook saw the underlying tool, none saw the bridge.
    hooks = catalog_records(main_session.home, "hook")
    seen = {h["hook"] for h in hooks if h["tool_name"] == "github_create_issue" and h["tool_call_id"] == "call_bridge"}
    assert seen == {"pre_tool_call", "post_tool_call", "transform_tool_result"}
    probe = {e["hook"] for e in main_session.home.probe_events() if e.get("tool_name") == "github_create_issue"}
    assert {"post_tool_call", "transform_tool_result"} <= probe
    assert not [h for h in hooks if h["tool_name"] == CALL_NAME]
    assert main_session.result.step("issue")["engine"]["status"]["tool_search"]["calls"] >= 1

    # The next request shows the call in bridge form and is a valid transcript.
    bridged = calls_by_id(after_call)["call_bridge"]["function"]
    assert bridged["name"] == CALL_NAME
    assert json.loads(bridged["arguments"]) == {"name": "github_create_issue", "arguments": ISSUE_ARGS}
    for request in main_session.requests("issue") + main_session.requests("direct") + main_session.requests("list"):
        assert_consistent(request)


def test_a_direct_call_to_a_deferred_tool_by_name_runs(main_session: Session) -> None:
    after = main_session.llm.matching(Match.after_tool_result("call_direct"))[0]
    assert "slack_slack_post_message" not in after.tool_names  # still deferred
    assert json.loads(after.tool_results["call_direct"])["echo"] == SLACK_ARGS  # no "unknown tool"
    calls = [c for c in catalog_records(main_session.home, "call") if c["tool"] == "slack_slack_post_message"]
    assert [c["args"] for c in calls] == [SLACK_ARGS]
    direct = calls_by_id(after)["call_direct"]["function"]
    assert direct["name"] == CALL_NAME and json.loads(direct["arguments"])["name"] == "slack_slack_post_message"
    assert_consistent(after)


def test_list_all_query_names_every_deferred_tool(main_session: Session) -> None:
    listed = json.loads(main_session.llm.matching(Match.after_tool_result("call_list"))[0].tool_results["call_list"])
    names = {name for group in listed["tools"].values() for name in group}
    full = {t["function"]["name"] for t in main_session.full_tools()}
    visible = set(main_session.requests("list")[0].tool_names)
    assert names == full - visible
    assert listed["total_available"] == len(names)
    assert sorted(listed["tools"]["catalog-memory"]) == sorted(n for n in names if n.startswith("memory_"))


# ----------------------------------------------------------------------------- a restricted session
@pytest.fixture(scope="module")
def scoped_session(mcp_catalog: CapturedCatalog, module_tmp: Path) -> Iterator[Session]:
    """``on``, the agent built without the slack toolset; the model still tries slack through the bridges."""
    leak = {"channel_id": "C0123", "text": "leaked"}
    with FakeLLMServer() as llm:
        home = catalog_home(module_tmp / "scoped", llm.base_url, {"enabled": "on"})
        llm.on(
            Match.user_turn("SCOPE"),
            Reply.tool(
                ToolCall(SEARCH_NAME, {"query": "post a message to a slack channel"}, id="call_s_search"),
                ToolCall(DESCRIBE_NAME, {"name": "slack_slack_post_message"}, id="call_s_describe"),
            ),
        )
        llm.on(
            Match.after_tool_result("call_s_describe"),
            Reply.tool(ToolCall(CALL_NAME, {"name": "slack_slack_post_message", "arguments": leak}, id="call_s_call")),
        )
        llm.on(
            Match.after_tool_result("call_s_call"), Reply.tool(ToolCall(SEARCH_NAME, {"query": "*"}, id="call_s_list"))
        )
        llm.on(
            Match.after_tool_result("call_s_list"),
            Reply.tool(
                ToolCall(
                    CALL_NAME,
                    {
                        "calls": [
                            {"name": "slack_slack_post_message", "arguments": leak},
                            {"name": "github_create_issue", "arguments": ISSUE_ARGS},
                        ]
                    },
                    id="call_s_batch",
                ),
                ToolCall(
                    DESCRIBE_NAME,
                    {"names": ["slack_slack_post_message", "github_create_issue"]},
                    id="call_s_describe_many",
                ),
            ),
        )
        llm.on(Match.after_tool_result("call_s_describe_many"), Reply.say("no slack here"))
        scenario = Scenario(agent={"disabled_toolsets": ["catalog-slack"]}).turn("SCOPE: post to slack", id="scope")
        result = run_catalog(home, scenario, mcp_catalog)
        yield Session(result, llm, home)


def test_a_tool_outside_the_session_scope_is_refused_and_never_listed(
    scoped_session: Session, mcp_catalog: CapturedCatalog
) -> None:
    slack = mcp_catalog.names_of("slack")
    final = scoped_session.llm.last_main_request()
    assert not slack & set(scoped_session.result.agents[0]["tools"])  # the host honoured disabled_toolsets

    refused = json.loads(final.tool_results["call_s_call"])
    assert "slack_slack_post_message" in refused["error"] and "not available to this session" in refused["error"]
    assert not [c for c in catalog_records(scoped_session.home, "call") if c["tool"] in slack]
    assert not [h for h in catalog_records(scoped_session.home, "hook") if h["tool_name"] in slack]
    described = json.loads(final.tool_results["call_s_describe"])
    assert "not available to this session" in described["error"]

    hits = {m["name"] for m in json.loads(final.tool_results["call_s_search"])["matches"]}
    assert hits and not hits & slack
    listed = json.loads(final.tool_results["call_s_list"])
    names = {name for group in listed["tools"].values() for name in group}
    assert names >= mcp_catalog.names - slack and not names & slack
    status = scoped_session.result.step("scope")["engine"]["status"]["tool_search"]
    assert status["refusals"] == 2 and status["calls"] == 1  # the batch: slack refused, github ran
    assert_consistent(final)


def test_out_of_scope_names_are_refused_in_batches_too_and_do_not_stop_the_others(
    scoped_session: Session, mcp_catalog: CapturedCatalog
) -> None:
    final = scoped_session.llm.last_main_request()
    batch = json.loads(final.tool_results["call_s_batch"])["results"]
    assert "not available to this session" in batch[0]["error"]
    assert batch[1]["result"]["echo"] == ISSUE_ARGS
    slack = mcp_catalog.names_of("slack")
    assert not [c for c in catalog_records(scoped_session.home, "call") if c["tool"] in slack]
    assert [c["tool"] for c in catalog_records(scoped_session.home, "call")] == ["github_create_issue"]
    described = json.loads(final.tool_results["call_s_describe_many"])["results"]
    assert "not available to this session" in described[0]["error"]
    assert described[1]["name"] == "github_create_issue"
    assert not slack & listed_names(final)  # nor listed


def test_bridge_text_is_byte_identical_across_turns_and_across_sessions_with_different_catalogs(
    main_session: Session, scoped_session: Session
) -> None:
    main_requests = [r for r in main_session.llm.main_requests()]
    scoped_requests = [r for r in scoped_session.llm.main_requests()]
    for requests in (main_requests, scoped_requests):
        assert len({json.dumps(bridges_of(r)) for r in requests}) == 1, "bridge schemas changed between requests"
    assert len(bridges_of(main_requests[0])) == 3
    # Across sessions only the listing differs: it follows each session's deferred tools.
    main_b, scoped_b = bridges_of(main_requests[0]), bridges_of(scoped_requests[0])
    assert main_b[1:] == scoped_b[1:] and main_b[0]["function"]["parameters"] == scoped_b[0]["function"]["parameters"]
    assert (
        search_description(main_requests[0]).partition("\n\n")[0]
        == search_description(scoped_requests[0]).partition("\n\n")[0]
    )
    assert "slack_slack_post_message" in listed_names(main_requests[0])
    assert "slack_slack_post_message" not in listed_names(scoped_requests[0])
    # The two sessions really defer different catalogs (slack is out of scope in one).
    main_list = json.loads(main_session.llm.matching(Match.after_tool_result("call_list"))[0].tool_results["call_list"])
    scoped_list = json.loads(scoped_session.llm.last_main_request().tool_results["call_s_list"])
    assert main_list["total_available"] != scoped_list["total_available"]
    # Within a session the whole tool list is stable from turn to turn (prompt-cache prefix).
    assert len({json.dumps(r.tools) for r in main_requests}) == 1


# ----------------------------------------------------------------------------- configuration
def test_never_defer_keeps_a_catalog_schema_visible(
    fake_llm: FakeLLMServer, e2e_tmp: Path, mcp_catalog: CapturedCatalog
) -> None:
    home = catalog_home(
        e2e_tmp / "pinned", fake_llm.base_url, {"enabled": "on", "never_defer": ["github_create_issue"]}
    )
    run_catalog(home, Scenario().turn("hello"), mcp_catalog)
    request = fake_llm.last_main_request()
    names = set(request.tool_names)
    assert "github_create_issue" in names and set(BRIDGE_NAMES) <= names
    assert not names & (mcp_catalog.names - {"github_create_issue"})
    pinned = next(t["function"] for t in request.tools if t["function"]["name"] == "github_create_issue")
    assert pinned["parameters"] == mcp_catalog.input_schema("github", "create_issue")


def test_mode_off_defers_nothing_and_offers_no_bridges(
    fake_llm: FakeLLMServer, e2e_tmp: Path, mcp_catalog: CapturedCatalog
) -> None:
    home = catalog_home(e2e_tmp / "off", fake_llm.base_url, {"enabled": "off"})
    result = run_catalog(home, Scenario().turn("hello", id="t"), mcp_catalog)
    names = set(fake_llm.last_main_request().tool_names)
    assert mcp_catalog.names <= names and not names & BRIDGE_NAMES
    assert names == set(result.agents[0]["tools"])
    assert result.step("t")["engine"]["status"]["tool_search"]["reason"] == "mode off"


def test_auto_mode_with_a_large_window_keeps_every_schema_visible(
    fake_llm: FakeLLMServer, e2e_tmp: Path, mcp_catalog: CapturedCatalog
) -> None:
    home = catalog_home(e2e_tmp / "wide", fake_llm.base_url, {"enabled": "auto"}, context_length=1_000_000)
    result = run_catalog(home, Scenario().turn("hello", id="t"), mcp_catalog)
    names = set(fake_llm.last_main_request().tool_names)
    assert mcp_catalog.names <= names and not names & BRIDGE_NAMES
    status = result.step("t")["engine"]["status"]["tool_search"]
    assert not status["active"] and "< threshold 100000 tokens" in status["reason"]


def test_preselect_shows_the_best_schemas_for_the_latest_user_message(
    fake_llm: FakeLLMServer, e2e_tmp: Path, mcp_catalog: CapturedCatalog
) -> None:
    # "on" with preselect defers below the auto threshold too (at 10% of 128k this catalog would not defer).
    home = catalog_home(
        e2e_tmp / "preselect", fake_llm.base_url, {"enabled": "on", "preselect": True, "preselect_k": 4}
    )
    scenario = (
        Scenario()
        .turn("Geocode 10 Downing Street, London and give me driving directions to the British Museum", id="maps")
        .turn("Read the text file notes.txt from disk", id="files")
    )
    result = run_catalog(home, scenario, mcp_catalog)
    maps = result.step_requests(fake_llm, "maps")[0]
    files = result.step_requests(fake_llm, "files")[0]

    for request, step, expected in (
        (maps, "maps", {"google_maps_maps_geocode", "google_maps_maps_directions"}),
        (files, "files", {"filesystem_read_text_file"}),
    ):
        names = request.tool_names
        kept = [n for n in names if n in mcp_catalog.names]
        assert expected <= set(kept), kept
        assert 0 < len(kept) <= 4 and set(BRIDGE_NAMES) <= set(names)
        # Kept schemas follow the bridges, in name order (byte-stable when the pick repeats).
        assert names[-len(kept) :] == sorted(kept) and names.index(CALL_NAME) < names.index(kept[0])
        full = next(t["function"] for t in request.tools if t["function"]["name"] == sorted(expected)[0])
        assert full["parameters"]  # the real schema, not a stub
        status = result.step(step)["engine"]["status"]["tool_search"]
        assert status["active"] and sorted(status["preselected"]) == sorted(kept)
    assert "google_maps_maps_geocode" not in files.tool_names  # back behind the bridges next turn


# ----------------------------------------------------------------------------- Hermes's own tool search
def test_hermes_tool_search_on_means_stowage_does_not_defer_again(
    fake_llm: FakeLLMServer, e2e_tmp: Path, mcp_catalog: CapturedCatalog
) -> None:
    home = catalog_home(
        e2e_tmp / "host", fake_llm.base_url, {"enabled": "auto"}, config={"tools": {"tool_search": {"enabled": "on"}}}
    )
    fake_llm.on(
        Match.user_turn("HOST"),
        Reply.tool(ToolCall("tool_search", {"query": "open a new issue in a github repository"}, id="call_h_search")),
    )
    fake_llm.on(
        Match.after_tool_result("call_h_search"),
        Reply.tool(ToolCall("tool_call", {"name": "github_create_issue", "arguments": ISSUE_ARGS}, id="call_h_call")),
    )
    fake_llm.on(Match.after_tool_result("call_h_call"), Reply.say("done"))
    result = run_catalog(home, Scenario().turn("HOST: open the issue", id="host"), mcp_catalog)

    requests = [r for r in result.step_requests(fake_llm, "host") if r.is_main]
    for request in requests:
        names = set(request.tool_names)
        assert set(HOST_BRIDGES) <= names and not names & BRIDGE_NAMES
        assert not names & mcp_catalog.names
        assert set(ENGINE_TOOLS) <= names
    hits = [m["name"] for m in json.loads(requests[1].tool_results["call_h_search"])["matches"]]
    assert "github_create_issue" in hits
    assert [c["args"] for c in catalog_records(home, "call")] == [ISSUE_ARGS]
    seen = {h["hook"] for h in catalog_records(home, "hook") if h["tool_name"] == "github_create_issue"}
    assert seen == {"pre_tool_call", "post_tool_call", "transform_tool_result"}
    # Hermes keeps its own bridge in the transcript.
    assert calls_by_id(requests[-1])["call_h_call"]["function"]["name"] == "tool_call"
    status = result.step("host")["engine"]["status"]["tool_search"]
    assert not status["active"] and "Hermes tool search is active" in status["reason"]
    for request in requests:
        assert_consistent(request)


# ----------------------------------------------------------------------------- a real MCP server in Hermes
def test_a_real_mcp_server_started_by_hermes_is_deferred_found_and_called(
    fake_llm: FakeLLMServer, e2e_tmp: Path, npm_root: Path
) -> None:
    memory_spec = next(s for s in SERVERS if s.name == "memory")
    scratch = e2e_tmp / "memory-server"
    scratch.mkdir()
    command, args, env = server_command(npm_root, memory_spec, scratch)
    home = catalog_home(
        e2e_tmp / "mcp",
        fake_llm.base_url,
        {"enabled": "on"},
        catalog=False,
        config={"mcp_servers": {"memory": {"command": command, "args": args, "env": env}}},
    )
    entity = {"name": "Ada Lovelace", "entityType": "person", "observations": ["wrote the first program"]}
    fake_llm.on(
        Match.user_turn("REMEMBER"),
        Reply.tool(ToolCall(SEARCH_NAME, {"query": "create entities in the knowledge graph"}, id="call_m_search")),
    )
    fake_llm.on(
        Match.after_tool_result("call_m_search"),
        Reply.tool(
            ToolCall(
                CALL_NAME,
                {"name": "mcp__memory__create_entities", "arguments": {"entities": [entity]}},
                id="call_m_create",
            )
        ),
    )
    fake_llm.on(
        Match.after_tool_result("call_m_create"),
        Reply.tool(
            ToolCall(
                CALL_NAME, {"name": "mcp__memory__search_nodes", "arguments": {"query": "Lovelace"}}, id="call_m_read"
            )
        ),
    )
    fake_llm.on(Match.after_tool_result("call_m_read"), Reply.say("remembered"))
    result = run_scenario(
        home, Scenario(discover_mcp=True).turn("REMEMBER: Ada wrote the first program", id="mcp"), check=True
    )

    memory_tools = {n for n in result.agents[0]["tools"] if n.startswith("mcp__memory__")}
    assert {"mcp__memory__create_entities", "mcp__memory__search_nodes"} <= memory_tools
    requests = [r for r in result.step_requests(fake_llm, "mcp") if r.is_main]
    for request in requests:
        assert not memory_tools & set(request.tool_names), "MCP schemas must be deferred"
        assert set(BRIDGE_NAMES) <= set(request.tool_names)
        assert_consistent(request)
    hits = [m for m in json.loads(requests[1].tool_results["call_m_search"])["matches"]]
    assert hits[0]["name"] == "mcp__memory__create_entities" and hits[0]["source"] == "mcp-memory"

    final = requests[-1]
    assert "Ada Lovelace" in final.tool_results["call_m_create"]
    assert "wrote the first program" in final.tool_results["call_m_read"]  # the server's own answer
    stored = (scratch / "memory.jsonl").read_text()
    assert "Ada Lovelace" in stored  # the real server ran the call
    call = calls_by_id(final)["call_m_create"]["function"]
    assert call["name"] == CALL_NAME and json.loads(call["arguments"])["name"] == "mcp__memory__create_entities"
    assert result.step("mcp")["engine"]["status"]["tool_search"]["calls"] == 2


# ----------------------------------------------------------------------------- batches and the listing
GEOCODE_ARGS = {"address": "10 Downing Street, London"}


def search_description(request: RecordedRequest) -> str:
    return next(t["function"]["description"] for t in request.tools if t["function"]["name"] == SEARCH_NAME)


def listed_names(request: RecordedRequest) -> set[str]:
    """Names the search bridge's listing shows (``- name: ...`` lines or ``[toolset] a, b`` lines)."""
    text = search_description(request)
    _, _, listing = text.partition("\n\n")
    names: set[str] = set()
    for line in listing.splitlines()[1:]:
        if line.startswith("- "):
            names.add(line[2:].split(":", 1)[0])
        elif line.startswith("[") and "] " in line and "names not listed" not in line:
            names.update(n.strip() for n in line.split("] ", 1)[1].split(","))
    return names


@pytest.fixture(scope="module")
def batch_session(mcp_catalog: CapturedCatalog, module_tmp: Path) -> Iterator[Session]:
    """``on``: a batched search, a batched describe (with bad entries), a batched call; then a listed tool
    called with no search at all."""
    with FakeLLMServer() as llm:
        home = catalog_home(module_tmp / "batch", llm.base_url, {"enabled": "on"})
        llm.on(
            Match.user_turn("BATCH"),
            Reply.tool(
                ToolCall(
                    SEARCH_NAME,
                    {
                        "queries": [
                            "open a new issue in a github repository",
                            "post a message to a slack channel",
                            "open a new issue in a github repository",
                            17,
                        ]
                    },
                    id="call_b_search",
                )
            ),
        )
        llm.on(
            Match.after_tool_result("call_b_search"),
            Reply.tool(
                ToolCall(
                    DESCRIBE_NAME,
                    {"names": ["github_create_issue", "slack_slack_post_message", "no_such_tool", ""]},
                    id="call_b_describe",
                )
            ),
        )
        llm.on(
            Match.after_tool_result("call_b_describe"),
            Reply.tool(
                ToolCall(
                    CALL_NAME,
                    {
                        "calls": [
                            {"name": "github_create_issue", "arguments": ISSUE_ARGS},
                            {"name": "slack_slack_post_message", "arguments": SLACK_ARGS},
                            {"name": "no_such_tool", "arguments": {}},
                            {"name": "github_create_issue", "arguments": ISSUE_ARGS},
                        ]
                    },
                    id="call_b_call",
                )
            ),
        )
        llm.on(Match.after_tool_result("call_b_call"), Reply.say("both done"))
        llm.on(
            Match.user_turn("LISTED"),
            Reply.tool(
                ToolCall(CALL_NAME, {"name": "google_maps_maps_geocode", "arguments": GEOCODE_ARGS}, id="call_listed")
            ),
        )
        llm.on(Match.after_tool_result("call_listed"), Reply.say("geocoded"))
        scenario = (
            Scenario()
            .turn("BATCH: open the issue and tell slack", id="batch")
            .turn("LISTED: where is 10 Downing Street?", id="listed")
        )
        result = run_catalog(home, scenario, mcp_catalog)
        yield Session(result, llm, home)


def test_a_batched_search_answers_per_query_with_one_shared_tool_map(batch_session: Session) -> None:
    out = json.loads(
        batch_session.llm.matching(Match.after_tool_result("call_b_search"))[0].tool_results["call_b_search"]
    )
    results = out["results"]
    assert [r["query"] for r in results[:2]] == [
        "open a new issue in a github repository",
        "post a message to a slack channel",
    ]
    assert "github_create_issue" in [m["name"] for m in results[0]["matches"]]
    assert "slack_slack_post_message" in [m["name"] for m in results[1]["matches"]]
    assert "repeats entry 0" in results[2]["error"] and "not a string" in results[3]["error"]
    assert set(out["tools"]) == {m["name"] for r in results[:2] for m in r["matches"]}
    assert out["tools"]["github_create_issue"]["source"] == "catalog-github"


def test_a_batched_describe_returns_each_schema_or_its_own_error(
    batch_session: Session, mcp_catalog: CapturedCatalog
) -> None:
    out = json.loads(
        batch_session.llm.matching(Match.after_tool_result("call_b_describe"))[0].tool_results["call_b_describe"]
    )
    r = out["results"]
    assert r[0]["name"] == "github_create_issue"
    assert r[0]["parameters"] == mcp_catalog.input_schema("github", "create_issue")
    assert r[1]["parameters"] == mcp_catalog.input_schema("slack", "slack_post_message")
    assert "not available to this session" in r[2]["error"] and "empty" in r[3]["error"]


def test_a_batched_call_runs_each_entry_through_hermes_and_refuses_the_bad_ones(batch_session: Session) -> None:
    after = batch_session.llm.matching(Match.after_tool_result("call_b_call"))[0]
    out = json.loads(after.tool_results["call_b_call"])
    r = out["results"]
    assert r[0] == {
        "name": "github_create_issue",
        "result": {"ok": True, "tool": "github_create_issue", "echo": ISSUE_ARGS},
    }
    assert r[1]["result"]["echo"] == SLACK_ARGS
    assert "not available to this session" in r[2]["error"]
    assert "repeats entry 0" in r[3]["error"]
    calls = catalog_records(batch_session.home, "call")
    assert [(c["tool"], c["args"]) for c in calls if c["tool"] != "google_maps_maps_geocode"] == [
        ("github_create_issue", ISSUE_ARGS),
        ("slack_slack_post_message", SLACK_ARGS),
    ]  # once each, in order
    # Each entry went through Hermes's dispatch: hooks saw the real tools, never the bridge.
    hooks = catalog_records(batch_session.home, "hook")
    for tool in ("github_create_issue", "slack_slack_post_message"):
        assert {h["hook"] for h in hooks if h["tool_name"] == tool} == {
            "pre_tool_call",
            "post_tool_call",
            "transform_tool_result",
        }
    # The host's executor also sees the batch itself as one engine-tool call (pre/post hooks, no
    # transform_tool_result, which Hermes fires only in handle_function_call).
    assert sorted(h["hook"] for h in hooks if h["tool_name"] == CALL_NAME) == ["post_tool_call", "pre_tool_call"]
    # The batch stays a bridge call in the transcript, consistent with the request.
    assert calls_by_id(after)["call_b_call"]["function"]["name"] == CALL_NAME
    assert_consistent(after)


def test_a_listed_tool_is_called_without_any_search(batch_session: Session) -> None:
    requests = batch_session.requests("listed")
    first = requests[0]
    assert "google_maps_maps_geocode" in listed_names(first)
    assert "google_maps_maps_geocode" not in first.tool_names  # deferred, only listed
    out = json.loads(requests[1].tool_results["call_listed"])
    assert out == {"ok": True, "tool": "google_maps_maps_geocode", "echo": GEOCODE_ARGS}
    called = [c["function"]["name"] for r in requests for c in r.tool_calls if c["id"] == "call_listed"]
    assert called and set(called) == {CALL_NAME}
    searched = [
        c
        for r in requests
        for c in r.tool_calls
        if c["function"]["name"] == SEARCH_NAME and c["id"] not in {"call_b_search"}
    ]
    assert not searched
    for request in requests:
        assert_consistent(request)


def test_the_listing_is_byte_identical_across_requests_and_within_budget(
    batch_session: Session, mcp_catalog: CapturedCatalog
) -> None:
    requests = batch_session.llm.main_requests()
    assert len(requests) >= 6
    descriptions = {search_description(r) for r in requests}
    assert len(descriptions) == 1, "the listing changed between requests of one session"
    assert len({json.dumps(bridges_of(r)) for r in requests}) == 1
    listing = descriptions.pop().partition("\n\n")[2]
    tokens = len(COUNTER.loaded.encoding.encode_ordinary(listing))  # exact, not the counter's sampled estimate
    assert 0 < tokens <= min(4000, 128_000 * 5 // 100)
    status = batch_session.result.step("listed")["engine"]["status"]["tool_search"]
    assert status["listing_level"] == "sentences" and abs(status["listing_tokens"] - tokens) <= tokens // 50
    assert mcp_catalog.names <= listed_names(requests[0])  # every deferred catalog tool is listed
    print(
        f"\n[tool search] listing: {len(listed_names(requests[0]))} tools, {tokens:,} o200k tokens, "
        f"level {status['listing_level']}"
    )


# ----------------------------------------------------------------------------- round trips, with and without
# Each task: (marker, tool, arguments, what a model would search for). The scripted model follows one
# policy in both sessions: call the tool directly when the search bridge's listing shows its name,
# otherwise search first and call it when the search finds it.
ROUND_TRIP_TASKS = (
    ("RT-A", "github_create_issue", ISSUE_ARGS, "open a new issue in a github repository"),
    ("RT-B", "slack_slack_post_message", SLACK_ARGS, "post a message to a slack channel"),
    ("RT-C", "google_maps_maps_geocode", GEOCODE_ARGS, "geocode an address into coordinates"),
    ("RT-D", "filesystem_read_text_file", {"path": "/tmp/notes.txt"}, "read a text file from disk"),
    ("RT-E", "memory_create_entities", {"entities": []}, "create entities in the knowledge graph"),
    ("RT-F", "brave_search_brave_web_search", {"query": "stowage"}, "search the web"),
)


def policy_model(request: RecordedRequest) -> Reply:
    """A model that skips the search when the listing shows the tool it needs."""
    task = next(t for t in ROUND_TRIP_TASKS if t[0] in request.last_user_text)
    marker, tool, args, query = task
    last_user = max(i for i, m in enumerate(request.messages) if m.get("role") == "user")
    turn = request.messages[last_user + 1 :]
    issued = [c for m in turn for c in (m.get("tool_calls") or [])]
    if any(c["function"]["name"] == CALL_NAME for c in issued):
        return Reply.say(f"{marker} done")
    call = ToolCall(CALL_NAME, {"name": tool, "arguments": args}, id=f"call_{marker}_run")
    if not issued:
        if tool in listed_names(request):
            return Reply.tool(call)
        return Reply.tool(ToolCall(SEARCH_NAME, {"query": query}, id=f"call_{marker}_search"))
    found = json.loads(request.tool_results[f"call_{marker}_search"])
    if tool in [m["name"] for m in found.get("matches", [])]:
        return Reply.tool(call)
    return Reply.say(f"{marker}: not found")


def round_trips(mcp_catalog: CapturedCatalog, root: Path, tool_search: dict[str, Any]) -> dict[str, float]:
    """Model requests until each deferred call ran, and searches, per successful call."""
    with FakeLLMServer() as llm:
        home = catalog_home(root, llm.base_url, tool_search)
        llm.on(Match.main(), policy_model, times=None)
        scenario = Scenario()
        for marker, _tool, _args, _query in ROUND_TRIP_TASKS:
            scenario = scenario.turn(f"{marker}: please do it", id=marker)
        result = run_catalog(home, scenario, mcp_catalog)
        requests = searches = successes = 0
        ran = {c["tool"] for c in catalog_records(home, "call")}
        for marker, tool, _args, _query in ROUND_TRIP_TASKS:
            turn = [r for r in result.step_requests(llm, marker) if r.is_main]
            if tool not in ran:
                continue
            successes += 1
            requests += len(turn) - 1  # the last request only reads the result and answers
            searches += sum(
                1
                for r in turn[-1:]
                for c in r.tool_calls
                if c["function"]["name"] == SEARCH_NAME and c["id"].startswith(f"call_{marker}")
            )
    return {
        "successes": successes,
        "requests_per_call": requests / max(1, successes),
        "searches_per_call": searches / max(1, successes),
    }


def test_the_listing_at_least_halves_round_trips_per_deferred_call(
    mcp_catalog: CapturedCatalog, module_tmp: Path
) -> None:
    assert {t[1] for t in ROUND_TRIP_TASKS} <= mcp_catalog.names
    with_listing = round_trips(mcp_catalog, module_tmp / "rt-listing", {"enabled": "on"})
    without = round_trips(mcp_catalog, module_tmp / "rt-none", {"enabled": "on", "listing_max_tokens": 0})
    print(
        f"\n[tool search] model requests per successful deferred call: without listing "
        f"{without['requests_per_call']:.2f} ({without['searches_per_call']:.2f} searches), with listing "
        f"{with_listing['requests_per_call']:.2f} ({with_listing['searches_per_call']:.2f} searches); "
        f"{with_listing['successes']}/{len(ROUND_TRIP_TASKS)} and {without['successes']}/{len(ROUND_TRIP_TASKS)} "
        "calls ran"
    )
    assert with_listing["successes"] == without["successes"] == len(ROUND_TRIP_TASKS)
    assert with_listing["searches_per_call"] == 0 and without["searches_per_call"] == 1
    assert with_listing["requests_per_call"] <= without["requests_per_call"] / 2


# ----------------------------------------------------------------------------- inline pre-selection
# The endpoint (plugins/stowage_dev/embedding_server.py) runs in the test process on 127.0.0.1 and serves a
# deterministic synonym-hashing "model". One session of 20 user messages, each answered in one step but the
# paraphrase: an endpoint set turns inline pre-selection on (the default), so the tool list is the same on every
# request, and each user message carries its picked schemas as text. The paraphrase ("tell #deploys ...", which
# BM25 alone misses) is answered by calling the tool the inlined block names, through the call bridge, with no
# search. Then the endpoint drips, hangs, fails with HTTP 500, and changes its dimension: each of those turns
# still ends (the client's one deadline, the ranking waited for off the request's locks) and status says why.
# A scripted model proves the plumbing only (see docs/tool-search.md for what would show real models use it).
PARAPHRASE = "tell #deploys the release went out"
TARGET = "slack_slack_post_message"
DEADLINE_S = 2
FAULTS = {"DRIP": "drip", "HANG": "hang", "FAIL": "500"}
INLINE_TURNS = [
    ("warm", "hello, we start with the release today"),
    ("post", PARAPHRASE),
    *[(f"note{n}", f"note {n}: nothing to do yet") for n in range(1, 6)],
    ("drip", "DRIP: read the text file notes.txt"),
    ("after_drip", "note 6: the file can wait"),
    ("hang", "HANG: which directories are you allowed to access"),
    ("fail", "FAIL: search the web for stowage"),
    ("dims", "DIMS: open an issue about the login page"),
    *[(f"late{n}", f"note {n}: still nothing") for n in range(7, 14)],
    ("last", "list the open issues of octo/demo"),
]


def inlined_names(text: str) -> list[str]:
    """The tools the inline block of a user message shows in full (``- name: {...}`` lines)."""
    if BLOCK_OPEN not in text:
        return []
    block = text[text.index(BLOCK_OPEN) : text.index(BLOCK_CLOSE)]
    return [line[2:].split(":", 1)[0] for line in block.splitlines() if line.startswith("- ")]


def inline_model(request: RecordedRequest) -> Reply:
    """Answers each message in one step; the paraphrase by calling, through the bridge, the block's post tool."""
    text = request.last_user_text
    if not text.startswith(PARAPHRASE):
        return Reply.say("ok")
    last_user = max(i for i, m in enumerate(request.messages) if m.get("role") == "user")
    if any(m.get("tool_calls") for m in request.messages[last_user + 1 :]):
        return Reply.say("told them")
    target = next((n for n in inlined_names(text) if n.endswith("post_message")), None)
    if target is None:
        return Reply.say("no such tool shown")
    args = {"channel_id": "C0123", "text": "release went out"}
    return Reply.tool(ToolCall(CALL_NAME, {"name": target, "arguments": args}, id="call_post"))


@dataclass
class InlineSession:
    result: DriverResult
    llm: FakeLLMServer
    home: HermesHome
    endpoint: EmbeddingServer
    resumed: DriverResult

    def requests(self, step: str | None = None) -> list[RecordedRequest]:
        steps = [step] if step else [s for s, _ in INLINE_TURNS]
        return [r for s in steps for r in self.result.step_requests(self.llm, s) if r.is_main]

    def semantic(self, step: str) -> str:
        return str(self.result.step(step)["engine"]["status"]["tool_search"]["semantic"])


@pytest.fixture(scope="module")
def inline_session(mcp_catalog: CapturedCatalog, module_tmp: Path) -> Iterator[InlineSession]:
    changed = {"dims": False}

    def mode_when(texts: list[str]) -> str | None:
        if len(texts) == 1:
            if texts[0].startswith("DIMS"):
                changed["dims"] = True
            for marker, mode in FAULTS.items():
                if texts[0].startswith(marker):
                    return mode
        if changed["dims"]:
            endpoint.dimensions = 128  # the model behind the name changed: every answer is 128 wide from now on
        return None

    with FakeLLMServer() as llm, EmbeddingServer(ConceptEmbedder()) as endpoint:
        endpoint.mode_when = mode_when
        endpoint.drip_s = 0.3  # each byte within any per-read timeout; the whole answer far past the deadline
        home = catalog_home(
            module_tmp / "inline",
            llm.base_url,
            {
                "enabled": "on",
                "embedding_endpoint": endpoint.base_url,
                "embedding_model": "stand-in",
                "embedding_timeout_s": DEADLINE_S,
                "embedding_retry_s": 0,  # ask again on the next message, so each fault is met
            },
        )
        llm.on(Match.main(), inline_model, times=None)
        scenario = Scenario()
        for step, text in INLINE_TURNS:
            scenario = scenario.turn(text, id=step)
        result = run_catalog(home, scenario.end_session(), mcp_catalog)
        # a new process resumes the session with the endpoint failing: the kept blocks are sent, nothing re-ranked
        endpoint.mode_when, endpoint.mode = None, "500"
        resumed = Scenario(resume_session=result.agents[0]["session_id"]).turn("RESUMED: one more thing", id="resumed")
        yield InlineSession(result, llm, home, endpoint, run_catalog(home, resumed, mcp_catalog))


def test_inline_the_tool_list_is_byte_identical_across_twenty_user_messages(
    inline_session: InlineSession, mcp_catalog: CapturedCatalog
) -> None:
    assert len(INLINE_TURNS) == 20
    requests = inline_session.requests()
    assert len(requests) >= 20
    lists = {json.dumps(r.tools, sort_keys=False) for r in requests}
    assert len(lists) == 1, f"{len(lists)} different tool lists"
    names = requests[0].tool_names
    assert set(BRIDGE_NAMES) <= set(names) and not mcp_catalog.names & set(names)  # no catalog schema in the list
    for request in requests:
        assert_consistent(request)
        assert BLOCK_OPEN in request.last_user_text  # every message got its block (BM25 alone while faulty)


def test_inline_blocks_are_resent_byte_identical_and_the_history_is_unchanged(inline_session: InlineSession) -> None:
    requests = inline_session.requests()
    first = {}
    for request in requests:
        for message in request.messages:
            text = message_text(message) if message.get("role") == "user" else ""
            head = text.split("\n\n" + BLOCK_OPEN)[0]
            if BLOCK_OPEN in text:
                assert first.setdefault(head, text) == text, f"the block of {head!r} changed"
    assert len(first) == 20  # one block per user message, each re-sent unchanged on every later request
    # the blocks live in the requests only: the session's history in state.db has none
    with sqlite3.connect(inline_session.home.path / "state.db") as db:
        contents = [str(c) for (c,) in db.execute("SELECT content FROM messages WHERE role = 'user'")]
    assert len(contents) >= 20 and not any(BLOCK_OPEN in c for c in contents)


def test_inline_a_resumed_session_in_a_new_process_sends_the_same_bytes(inline_session: InlineSession) -> None:
    before = inline_session.requests()[-1]
    after = [r for r in inline_session.resumed.step_requests(inline_session.llm, "resumed") if r.is_main][0]
    assert json.dumps(after.tools) == json.dumps(before.tools)  # the same tool list after the restart

    def users(request: RecordedRequest) -> list[str]:
        return [message_text(m) for m in request.messages if m.get("role") == "user"]

    assert users(after)[:20] == users(before)[:20]  # every kept block, byte for byte, with the endpoint down
    assert sum(BLOCK_OPEN in u for u in users(after)[:20]) == 20
    assert BLOCK_OPEN in users(after)[-1]  # the new message: BM25 alone, the endpoint failing
    semantic = inline_session.resumed.step("resumed")["engine"]["status"]["tool_search"]["semantic"]
    assert semantic.startswith("BM25 alone") and "HTTP 500" in semantic


def test_inline_a_paraphrase_calls_the_inlined_tool_with_no_search(
    inline_session: InlineSession, mcp_catalog: CapturedCatalog
) -> None:
    schemas = [
        {"name": f"{server}_{t['name']}", "description": t.get("description", ""), "parameters": t["inputSchema"]}
        for server, info in mcp_catalog.data["servers"].items()
        for t in info["tools"]
    ]
    assert TARGET not in preselect(Catalog.from_schemas(schemas), PARAPHRASE, k=5)  # BM25 alone misses it
    post = inline_session.requests("post")
    assert len(post) == 2  # the call and the answer: no search, no describe
    assert TARGET in inlined_names(post[0].last_user_text)
    called = [c["function"]["name"] for r in post for c in r.tool_calls]
    assert SEARCH_NAME not in called and DESCRIBE_NAME not in called
    assert [r["tool"] for r in catalog_records(inline_session.home, "call")] == [TARGET]
    assert inline_session.result.final_responses()[1] == "told them"
    status = inline_session.result.step("post")["engine"]["status"]["tool_search"]
    assert status["inline"] and TARGET in status["inlined"] and status["semantic"].startswith("BM25 + embeddings")


@pytest.mark.parametrize("step, reason", [("drip", "within"), ("hang", "within"), ("fail", "HTTP 500")])
def test_inline_a_faulty_endpoint_costs_a_turn_one_deadline_and_status_says_why(
    inline_session: InlineSession, step: str, reason: str
) -> None:
    record = inline_session.result.step(step)
    assert record["duration_s"] < 60  # a generous bound: without the one deadline a drip or hang never ends
    semantic = inline_session.semantic(step)
    assert semantic.startswith("BM25 alone") and reason in semantic, semantic
    assert inlined_names(inline_session.requests(step)[0].last_user_text)  # BM25 alone still picked
    assert any(len(r) == 1 and r[0].startswith(step.upper()) for r in inline_session.endpoint.requests)


def test_inline_a_dimension_change_is_reindexed_and_shown(inline_session: InlineSession) -> None:
    # the turn of the change either waited for the (quick) re-embedding within its one deadline or went on with
    # BM25 alone; either way status names the change and never claims embeddings from the stale vectors
    dims = inline_session.semantic("dims")
    assert "now answers 128 dimensions, the stored vectors have 256" in dims, dims
    assert dims.startswith("BM25 alone") or "re-embedded" in dims, dims
    last = inline_session.semantic("last")
    assert last.startswith("BM25 + embeddings") and "re-embedded" in last and "128 dimensions" in last, last
    vector_files = list((inline_session.home.path / "stowage" / "tool-vectors").glob("tool-vectors-*.json"))
    assert len(vector_files) == 1  # keyed by the model, not the endpoint's URL
    stored = json.loads(vector_files[0].read_text())
    assert stored["dimensions"] == 128 and stored["identity"] == "model|stand-in"
    assert len(stored["vectors"]) >= len(
        inline_session.result.step("last")["engine"]["status"]["tool_search"]["inlined"]
    )
