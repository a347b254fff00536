"""``stowage status`` and ``stowage doctor``: what is stored, and is it sound.

Both also answer the two questions that explain most "Stowage is not doing
anything" reports without reading logs: does the ``stowage:`` block validate,
and does the tokenizer load (offline)?  The ``/stowage`` slash command shows
the same text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..blobstore import StoreError
from ..blobstore.ownership import refusal
from ..context_engine.chat.markers import BlobKind
from ..context_engine.policy.fixed_part import below_fixed_part
from ..context_engine.records import session_files
from ..context_engine.records.session_files import STORE_COMPANIONS
from ..context_engine.records.session_status import SessionStatus
from ..context_engine.records.status_file import read_session_statuses
from ..host.load_failure import ESTIMATE_COST
from .env import Env, Outcome
from .formatting import counts, fields, human_duration, human_size, table
from .identity import check_identity
from .live import session_text
from .requirements import requirement_problems


def retention_info(env: Env) -> dict[str, Any]:
    """The limits in effect, in the config's units and in the store's."""
    store = env.effective_settings.store
    policy = env.policy
    return {
        "ttl_hours": store.ttl_hours,
        "max_store_mb": store.max_store_mb,
        "fetch_grace_hours": store.fetch_grace_hours,
        "tombstone_ttl_days": store.tombstone_ttl_days,
        "cross_session_reads": store.cross_session_reads,
        "from_defaults": env.settings is None,
        "policy": {
            "ttl_seconds": policy.ttl_seconds,
            "max_total_bytes": policy.max_total_bytes,
            "fetch_grace_seconds": policy.fetch_grace_seconds,
            "tombstone_ttl_seconds": policy.tombstone_ttl_seconds,
            "session_idle_seconds": policy.session_idle_seconds,
        },
    }


def _store_info(env: Env) -> dict[str, Any]:
    info: dict[str, Any] = {"path": str(env.store_root), "source": env.store_source, "exists": env.store_exists()}
    if not info["exists"]:
        return info
    stats = env.open_store().stats()
    quarantine = env.store_root / "quarantine"
    info.update(
        {
            key: stats[key]
            for key in (
                "total_bytes",
                "blob_count",
                "tombstones",
                "tombstones_by_reason",
                "by_kind",
                "by_content_type",
                "fetch_total",
                "fetched_blobs",
            )
        }
    )
    info["sessions"] = {
        "total": stats["sessions"],
        "live": stats["live_sessions"],
        "ended": stats["sessions"] - stats["live_sessions"],
    }
    info["spills"] = stats["by_kind"].get(BlobKind.SPILL, 0)
    info["quarantined"] = sum(1 for _ in quarantine.iterdir()) if quarantine.is_dir() else 0
    return info


def _limits_text(r: dict[str, Any]) -> str:
    pol = r["policy"]
    rows = [
        ("ttl", f"{r['ttl_hours']:g} h ({human_duration(pol['ttl_seconds'])}) since last read"),
        ("size cap", f"{r['max_store_mb']:g} MB ({human_size(pol['max_total_bytes'])})"),
        ("fetch grace", f"{r['fetch_grace_hours']:g} h"),
        ("tombstones kept", f"{r['tombstone_ttl_days']:g} days"),
        ("cross-session", "on" if r["cross_session_reads"] else "off"),
    ]
    head = "retention" + (" (defaults: the config block is invalid)" if r["from_defaults"] else "")
    return head + "\n" + fields(rows)


def _config_text(cfg: dict[str, Any]) -> str:
    if cfg["valid"]:
        return f"{cfg['path']} (valid)" if cfg["exists"] else f"{cfg['path']} (missing: all defaults)"
    return f"{cfg['path']} (INVALID: {len(cfg['problems'])} problem(s), run `stowage doctor`)"


def status(env: Env) -> Outcome:
    """Store location and contents, limits in effect, tokenizer backend."""
    identity = check_identity(env.hermes_home, env.config_path)
    data: dict[str, Any] = {
        "hermes_home": str(env.hermes_home),
        "config": env.config_info(),
        "identity": identity,
        "store": _store_info(env),
        "retention": retention_info(env),
        "tokenizer": env.tokenizer_info(),
    }
    st, tok = data["store"], data["tokenizer"]
    failing = [p for p in identity["problems"] if not p.get("advisory")]
    engine_text = identity["running"] + (f" ({len(failing)} problem(s): run `stowage doctor`)" if failing else "")
    rows: list[tuple[str, Any]] = [
        ("Hermes home", data["hermes_home"]),
        ("engine", engine_text),
        ("config", _config_text(data["config"])),
        ("compacts at", governing_trigger(env)),
        ("store", f"{st['path']} ({st['source']})"),
    ]
    if not st["exists"]:
        rows.append(("", refusal(env.store_root, STORE_COMPANIONS) or "not created yet: nothing has been stored"))
    else:
        cap = data["retention"]["policy"]["max_total_bytes"]
        used = f", {100 * st['total_bytes'] / cap:.1f}% of the cap" if cap else ""
        reasons = f" ({counts(st['tombstones_by_reason'])})" if st["tombstones"] else ""
        rows += [
            ("size", f"{human_size(st['total_bytes'])} in {st['blob_count']:,} blobs{used}"),
            ("tombstones", f"{st['tombstones']:,}{reasons}"),
            (
                "sessions",
                f"{st['sessions']['total']:,} ({st['sessions']['live']:,} live, {st['sessions']['ended']:,} ended)",
            ),
            ("kinds", counts(st["by_kind"])),
            ("content types", counts(st["by_content_type"])),
            ("spills", f"{st['spills']:,}"),
            ("fetches", f"{st['fetch_total']:,} ({st['fetched_blobs']:,} blob(s) fetched at least once)"),
        ]
        if st["quarantined"]:
            rows.append(("quarantined", f"{st['quarantined']:,} file(s) in {env.store_root / 'quarantine'}"))
    tok_rows = [
        ("backend", tok["backend"] + (f": {ESTIMATE_COST}" if tok["backend"] == "estimate" else "")),
        ("source", tok["source"] + (f" ({tok['detail']})" if tok["detail"] else "")),
    ]
    sessions = read_session_statuses(env.store_root) if st["exists"] else []
    data["sessions"] = [session.as_dict() for session in sessions]
    text = "\n".join(
        [
            "Stowage status",
            fields(rows),
            _limits_text(data["retention"]),
            "tokenizer",
            fields(tok_rows),
            *_sessions_text(sessions),
        ]
    )
    return Outcome(data, text)


def _sessions_text(sessions: list[SessionStatus]) -> list[str]:
    """What each of the newest sessions did (the engine writes these figures at each turn's end)."""
    if not sessions:
        return []
    lines = ["recent sessions"]
    for session in sessions:
        lines += session_text(session.session_id, session, indent=4)
    return lines


class TerminalProgress:
    """``checked 1,200 of 50,000 blobs (1.2 GB)`` on one rewritten stderr line, for large stores on a terminal."""

    EVERY = 500  # blobs between updates

    def __init__(self, stream: Any) -> None:
        self.stream, self.shown = stream, False

    def __call__(self, done: int, total: int, checked: int) -> None:
        if total < self.EVERY or (done % self.EVERY and done != total):
            return
        self.stream.write(f"\rchecked {done:,} of {total:,} blobs ({human_size(checked)})")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


def doctor(env: Env, repair: bool = False, verify: bool = True, progress: Any = None) -> Outcome:
    """Store doctor plus config and offline-tokenizer checks; exit 1 while problems remain."""
    problems: list[dict[str, Any]] = []
    cfg = env.config_info()
    identity = check_identity(env.hermes_home, env.config_path)
    problems += identity["problems"]
    problems += requirement_problems()
    if not cfg["valid"]:
        problems.append(
            {
                "kind": "config-invalid",
                "severity": "error",
                "subject": cfg["path"],
                "detail": cfg["error"],
                "repairable": False,
                "repaired": False,
            }
        )
    tok = env.tokenizer_offline()
    if not tok["ok"]:
        problems.append(
            {
                "kind": "tokenizer-offline",
                "severity": "error",
                "subject": tok["encoding"],
                "detail": f"does not load offline ({tok['detail']}): {ESTIMATE_COST}",
                "repairable": False,
                "repaired": False,
            }
        )
    store: dict[str, Any] = {"path": str(env.store_root), "exists": env.store_exists()}
    if store["exists"]:
        try:
            report = env.open_store().doctor(repair=repair, verify=verify, progress=progress).to_dict()
        except StoreError as exc:
            report = None
            problems.append(
                {
                    "kind": "store-unreadable",
                    "severity": "error",
                    "subject": str(env.store_root),
                    "detail": str(exc),
                    "repairable": False,
                    "repaired": False,
                }
            )
        if report is not None:
            store.update(
                {k: report[k] for k in ("blobs_checked", "bytes_checked", "temp_in_progress", "verified", "consistent")}
            )
            problems += report["issues"]
    problems += _session_file_problems(env.store_root, repair)
    problems += _trigger_problems(env)
    problems += _estimated_session_problems(env, tokenizer_loads=tok["ok"])
    remaining = [p for p in problems if not p["repaired"] and not p.get("advisory")]
    data: dict[str, Any] = {
        "repair": repair,
        "identity": identity,
        "config": cfg,
        "tokenizer": tok,
        "store": store,
        "trigger": governing_trigger(env),
        "issues": problems,
        "remaining": len(remaining),
        "ok": not remaining,
    }
    return Outcome(data, _doctor_text(data), 0 if not remaining else 1)


def governing_trigger(env: Env) -> str:
    """Which key starts compaction while Stowage runs; Hermes's ``config show`` prints another one."""
    settings = env.effective_settings
    if settings.view.enabled:
        return (
            f"view.compact_at {settings.view.compact_at:g} of the window, on the request as sent "
            "(not the compression threshold `hermes config show` prints)"
        )
    return (
        f"compaction.threshold {settings.compaction.threshold:g} of the window (the lean view is off; "
        "`hermes config show` prints compression.threshold, which this key inherits unless set)"
    )


def _trigger_problems(env: Env) -> list[dict[str, Any]]:
    """The newest session's trigger against what its requests carry before any history (fixed_part.py)."""
    if not env.store_exists():
        return []
    sessions = [
        s
        for s in read_session_statuses(env.store_root)
        if s.fixed_part is not None and s.fixed_part.tokens and s.threshold_tokens
    ]
    if not sessions:
        return []
    newest = max(sessions, key=lambda s: s.updated_at or 0.0)
    key = newest.trigger.key if newest.trigger is not None and newest.trigger.key else "view.compact_at"
    warning = below_fixed_part(newest.fixed_part, newest.threshold_tokens, newest.context_length, key)
    if warning is None:
        return []
    return [
        {
            "kind": "trigger-below-fixed-part",
            "severity": "warning",
            "subject": f"session {newest.session_id}",
            "detail": warning,
            "repairable": False,
            "repaired": False,
        }
    ]


def _estimated_session_problems(env: Env, *, tokenizer_loads: bool) -> list[dict[str, Any]]:
    """The newest session counted with characters/4: a note when the tokenizer loads now (the next session counts
    exactly), nothing more when it does not (``tokenizer-offline`` already fails doctor with the cost)."""
    if not env.store_exists():
        return []
    sessions = [s for s in read_session_statuses(env.store_root) if s.tokenizer]
    if not sessions:
        return []
    newest = max(sessions, key=lambda s: s.updated_at or 0.0)
    if newest.tokenizer != "estimate" or not tokenizer_loads:
        return []
    return [
        {
            "kind": "session-counted-estimates",
            "severity": "note",
            "subject": f"session {newest.session_id}",
            "detail": "the newest session counted tokens as characters/4 (its Hermes could not load the tokenizer); "
            "it loads here now, so the next session counts exactly. If it does not, Hermes runs another Python "
            "or another TIKTOKEN_CACHE_DIR than this command",
            "repairable": False,
            "repaired": False,
            "advisory": True,
        }
    ]


def _session_file_problems(store_root: Any, repair: bool) -> list[dict[str, Any]]:
    """The status files and summary logs beside the store: modes, names, parsability."""
    out = []
    for problem in session_files.check(store_root):
        repaired = False
        if repair and problem.repair_mode is not None:
            try:
                repaired = problem.repair()
            except OSError:
                repaired = False
        out.append(
            {
                "kind": problem.kind,
                "severity": "warning",
                "subject": str(problem.path),
                "detail": problem.detail,
                "repairable": problem.repair_mode is not None,
                "repaired": repaired,
            }
        )
    return out


def _doctor_text(data: dict[str, Any]) -> str:
    st, cfg, tok = data["store"], data["config"], data["tokenizer"]
    lines = ["Stowage doctor" + (" (repair)" if data["repair"] else "")]
    ident = data["identity"]
    rows: list[tuple[str, Any]] = [
        ("engine", ident["running"]),
        ("install", _route_text(ident)),
        ("config", "valid" if cfg["valid"] else "INVALID"),
        ("compacts at", data["trigger"]),
    ]
    rows.append(
        (
            "tokenizer",
            f"{tok['encoding']} loads offline ({tok['source']})"
            if tok["ok"]
            else f"{tok['encoding']} does NOT load offline",
        )
    )
    if not st["exists"]:
        rows.append(
            ("store", refusal(Path(st["path"]), STORE_COMPANIONS) or f"{st['path']}: not created yet, nothing to check")
        )
    elif "blobs_checked" in st:
        how = f"hashes verified, {human_size(st['bytes_checked'])}" if st["verified"] else "hashes not verified"
        rows.append(("store", f"{st['path']}: {st['blobs_checked']:,} blobs checked ({how})"))
        if st["temp_in_progress"]:
            rows.append(("", f"{st['temp_in_progress']} write(s) in progress left alone"))
    else:
        rows.append(("store", f"{st['path']}: could not be checked"))
    if ident.get("host_caps_fixed"):  # a note: Hermes offers no setting for these
        rows.append(("output caps", "no setting lifts: " + "; ".join(ident["host_caps_fixed"])))
    lines.append(fields(rows))
    issues = data["issues"]
    if issues:
        lines.append("problems")
        lines.append(
            table(
                ["SEVERITY", "KIND", "SUBJECT", "STATE", "DETAIL"],
                [
                    [
                        i["severity"],
                        i["kind"],
                        _subject(i["subject"]),
                        "repaired"
                        if i["repaired"]
                        else ("repairable" if i["repairable"] else "advice" if i.get("advisory") else "open"),
                        i["detail"].splitlines()[0] if i["detail"] else "",
                    ]
                    for i in issues
                ],
                indent=2,
            )
        )
        for i in issues:  # the rest of multi-line details (the config error's keys); the table has the first line
            rest = i["detail"].splitlines()[1:] if i["detail"] else []
            if rest:
                lines.append("\n".join(rest))
    remaining = data["remaining"]
    advice = [i for i in issues if i.get("advisory")]
    if not remaining:
        lines.append(
            "result: no problems"
            + (" remain" if len(issues) > len(advice) else "")
            + (f" ({len(advice)} piece(s) of advice above)" if advice else "")
        )
    else:
        fixable = sum(1 for i in issues if i["repairable"] and not i["repaired"])
        hint = f"; `stowage doctor --repair` can fix {fixable}" if fixable and not data["repair"] else ""
        lines.append(f"result: {remaining} problem(s) remain{hint}")
    return "\n".join(lines)


def _route_text(ident: dict[str, Any]) -> str:
    ep = ident["entry_point"]
    found = {True: "found", False: "not found", None: "could not be checked"}[ep.get("found")]
    parts = [f"entry point {found} in {ep.get('python')}"]
    folders = ident["user_plugin_folders"]
    parts.append(f"user plugin folder {folders[0]['path']}" if folders else "no user plugin folder")
    active = ident["active_route"]
    return "; ".join(parts) + (f" (active: {active})" if active else " (none active)")


def _subject(subject: str) -> str:
    """Shas as 16-hex handles (what other commands accept); paths unchanged."""
    if len(subject) == 64 and all(c in "0123456789abcdef" for c in subject):
        return subject[:16]
    return subject
