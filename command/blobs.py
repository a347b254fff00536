"""``stowage blobs ls|show|cat`` and ``stowage gc``: look at and prune stored blobs.

The operator acts with ``session_id=None`` (every blob is visible) and reads
never count as fetches, so looking at the store does not change what
retention will keep.  Handle errors propagate as the store's own
``HandleError`` (the caller maps them to exit status 2).
"""

from __future__ import annotations

import base64
import codecs
import sys
from typing import Any, BinaryIO, Iterator

from ..blobstore import BlobInfo, EvictedBlobError, Tombstone
from ..blobstore.errors import REASON_TEXT
from .env import CliError, Env, Outcome
from .formatting import clip, counts, fields, human_size, iso_time, relative_time, table
from .terminal import safe_text

BINARY_SNIFF_BYTES = 8192
COPY_CHUNK = 1 << 20


def _kinds(info: BlobInfo) -> str:
    return ",".join(dict.fromkeys(p.kind for p in info.provenance)) or "-"


def _origin(info: BlobInfo) -> tuple[str, str]:
    """(tool, session) of the latest production, with ``+N`` when there were others."""
    if not info.provenance:
        return "-", "-"
    latest = info.provenance[0]
    sessions = {p.session_id for p in info.provenance}
    more = f" +{len(sessions) - 1}" if len(sessions) > 1 else ""
    return latest.tool_name or "-", (latest.session_id or "-") + more


def ls(env: Env, session: str | None, kind: str | None, limit: int) -> Outcome:
    """Most recently used first, optionally only one session's or one kind's blobs."""
    if limit < 1:
        raise CliError("--limit must be at least 1", code=2, kind="usage")
    store = env.open_store()
    infos = store.list_blobs(session_id=session, limit=limit, kind=kind)
    total = store.stats()["blob_count"]
    data = {
        "store": str(env.store_root),
        "filters": {"session": session, "kind": kind, "limit": limit},
        "count": len(infos),
        "total_blobs": total,
        "blobs": [i.to_dict() for i in infos],
    }
    if not infos:
        what = " matching the filters" if session or kind else ""
        return Outcome(data, f"no blobs{what} in {env.store_root} ({total:,} stored in all)")
    rows = []
    for info in infos:
        tool, sess = _origin(info)
        rows.append(
            [
                info.handle,
                human_size(info.size),
                f"{info.line_count:,}",
                info.content_type,
                _kinds(info),
                clip(tool, 24),
                clip(sess, 28),
                relative_time(info.last_access),
                f"{info.fetch_count:,}",
            ]
        )
    text = table(
        ["HANDLE", "SIZE", "LINES", "TYPE", "KIND", "TOOL", "SESSION", "LAST USED", "FETCHES"], rows, right=(1, 2, 8)
    )
    shown = f"{len(infos):,} of {total:,} blobs" if not (session or kind) else f"{len(infos):,} blobs"
    more = " (raise --limit to see more)" if len(infos) == limit and limit < total else ""
    return Outcome(data, f"{text}\n{shown}{more}")


def _when(ts: float | None) -> str:
    return "never" if ts is None else f"{relative_time(ts)} ({iso_time(ts)})"


def _provenance_table(origins) -> str:  # noqa: ANN001 - tuple of Provenance
    return table(
        ["SESSION", "TOOL", "KIND", "COUNT", "FIRST", "LAST", "ARGS"],
        [
            [
                p.session_id or "-",
                p.tool_name or "-",
                p.kind,
                f"{p.count:,}",
                relative_time(p.first_at),
                relative_time(p.last_at),
                clip(p.tool_args, 60) or "-",
            ]
            for p in origins
        ],
        right=(3,),
        indent=2,
    )


def _show_tombstone(handle: str, tomb: Tombstone, message: str) -> Outcome:
    why = REASON_TEXT.get(tomb.reason, tomb.reason) + (f" ({tomb.detail})" if tomb.detail else "")
    rows = [
        ("sha256", tomb.sha256),
        ("size", f"{human_size(tomb.size)} ({tomb.size:,} bytes)"),
        ("content type", tomb.content_type or "-"),
        ("created", _when(tomb.created_at)),
        ("evicted", _when(tomb.evicted_at)),
        ("reason", f"{tomb.reason}: {why}"),
        ("tool", tomb.tool_name or "unknown"),
        ("arguments", clip(tomb.tool_args, 100) or "-"),
        ("session", tomb.session_id or "-"),
        ("kind", tomb.kind or "-"),
        ("readers", ", ".join(tomb.sessions) or "-"),
    ]
    parts = [f"blob {handle} (evicted)", fields(rows)]
    if tomb.origins:
        parts += ["provenance", _provenance_table(tomb.origins)]
    data = {"state": "evicted", "handle": handle, "tombstone": tomb.to_dict(), "message": message}
    return Outcome(data, "\n".join(parts))


def show(env: Env, handle: str) -> Outcome:
    """Metadata and provenance, or the tombstone of an evicted blob."""
    store = env.open_store()
    try:
        sha = store.resolve(handle)
    except EvictedBlobError as exc:
        return _show_tombstone(exc.handle, exc.tombstone, str(exc))
    info = store.stat(sha)
    chars = f"{info.char_count:,}" if info.char_count is not None else "- (not UTF-8)"
    rows = [
        ("sha256", info.sha256),
        ("size", f"{human_size(info.size)} ({info.size:,} bytes)"),
        ("lines", f"{info.line_count:,}"),
        ("chars", chars),
        ("encoding", "utf-8" if info.is_utf8 else "binary"),
        ("content type", info.content_type),
        ("created", _when(info.created_at)),
        ("last used", _when(info.last_access)),
        ("last fetch", _when(info.last_fetch)),
        ("fetches", f"{info.fetch_count:,}"),
        ("file", store.blob_path(sha)),
    ]
    parts = [f"blob {info.handle} (stored)", fields(rows)]
    if info.provenance:
        parts += ["provenance", _provenance_table(info.provenance)]
    data = {"state": "stored", "handle": info.handle, "blob": info.to_dict(), "file": str(store.blob_path(sha))}
    return Outcome(data, "\n".join(parts))


def parse_line_range(spec: str) -> tuple[int, int | None]:
    """``A:B`` (1-based, inclusive), ``A:`` or ``:B``; a bare ``N`` means line N only."""
    start_text, sep, end_text = spec.partition(":")
    try:
        start = int(start_text) if start_text.strip() else 1
        end = int(end_text) if end_text.strip() else None
        if not sep:
            end = start
    except ValueError:
        raise CliError(
            f"--lines {spec!r}: expected A:B with 1-based line numbers, e.g. 10:20, 10: or :20", code=2, kind="usage"
        ) from None
    if start < 1 or (end is not None and end < start):
        raise CliError(
            f"--lines {spec!r}: lines start at 1 and the end must not come before the start", code=2, kind="usage"
        )
    return start, end


def _selected_lines(store: Any, sha: str, start: int, end: int | None) -> Iterator[str]:
    for number, text in enumerate(store.iter_lines(sha, start), start):
        if end is not None and number > end:
            break
        yield text


def _text_lines(stream: Any) -> Iterator[str]:
    """Decoded lines (with their newline) of a binary stream read in chunks: a sequence never spans two."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""
    while chunk := stream.read(COPY_CHUNK):
        pending += decoder.decode(chunk)
        *lines, pending = pending.split("\n")
        for line in lines:
            yield line + "\n"
    pending += decoder.decode(b"", final=True)
    if pending:
        yield pending


def cat(
    env: Env,
    handle: str,
    lines: str | None,
    force: bool,
    as_json: bool,
    out: BinaryIO | None = None,
    is_tty: bool | None = None,
) -> Outcome:
    """Raw bytes to ``out`` (stdout); ``--lines`` gives decoded lines, each ending in a newline.

    Binary blobs are refused when ``out`` is a terminal (they can garble it)
    unless ``force``, and text reaches a terminal without control or escape
    sequences (:mod:`.terminal`); ``--json`` returns the content (base64 when binary).
    """
    store = env.open_store()
    sha = store.resolve(handle)
    info = store.stat(sha)
    span = parse_line_range(lines) if lines else None
    binary = (
        not info.is_utf8 or info.content_type == "binary" or b"\x00" in store.read_bytes(sha, 0, BINARY_SNIFF_BYTES)
    )
    if as_json:
        data: dict[str, Any] = {"handle": info.handle, "sha256": sha, "size": info.size, "binary": binary}
        if span:
            data.update(
                lines=[span[0], span[1]],
                encoding="text",
                content="".join(t + "\n" for t in _selected_lines(store, sha, *span)),
            )
        elif binary:
            data.update(encoding="base64", content=base64.b64encode(store.read_bytes(sha)).decode("ascii"))
        else:
            data.update(encoding="utf-8", content=store.read_bytes(sha).decode("utf-8"))
        return Outcome(data, "")
    out = out if out is not None else sys.stdout.buffer
    tty = is_tty if is_tty is not None else out.isatty()
    if binary and tty and not force:
        raise CliError(
            f"blob {info.handle} is binary ({human_size(info.size)}); refusing to write it to the "
            "terminal. Redirect it to a file (> out.bin) or pass --force",
            code=1,
            kind="binary",
        )
    clean = tty and not force  # a terminal gets no escape sequence from a stored output (--force: raw bytes)
    if span:
        for text in _selected_lines(store, sha, *span):
            out.write((safe_text(text) if clean else text).encode("utf-8") + b"\n")
    elif clean:
        with store.open_stream(sha) as stream:
            for line in _text_lines(stream):
                out.write(safe_text(line).encode("utf-8"))
    else:
        with store.open_stream(sha) as stream:
            while chunk := stream.read(COPY_CHUNK):
                out.write(chunk)
    out.flush()
    return Outcome({}, "")


def gc(env: Env, dry_run: bool) -> Outcome:
    """Apply retention now (or show what it would evict), with the reason per blob."""
    env.require_valid_config("run gc" + (" --dry-run" if dry_run else ""))
    store = env.open_store()
    report = store.gc(dry_run=dry_run)
    handles = {}
    for ev in report.evicted:
        try:
            handles[ev.sha256] = store.short_handle(ev.sha256)
        except Exception:  # noqa: BLE001 - a handle is cosmetic here
            handles[ev.sha256] = ev.sha256[:16]
    data = report.to_dict()
    for item in data["evicted"]:
        item["handle"] = handles[item["sha256"]]
    verb = "would evict" if dry_run else "evicted"
    head = (
        f"gc{' (dry run)' if dry_run else ''}: {verb} {len(report.evicted):,} blob(s), "
        f"{human_size(report.freed_bytes)}; store {human_size(report.total_bytes_before)} -> "
        f"{human_size(report.total_bytes_after)} (cap {human_size(store.policy.max_total_bytes)})"
    )
    parts = [head]
    if report.evicted:
        parts.append(
            table(
                ["HANDLE", "SIZE", "REASON", "LAST USED", "TOOL", "SESSION", "WHY"],
                [
                    [
                        handles[e.sha256],
                        human_size(e.size),
                        e.reason,
                        relative_time(e.last_access),
                        e.tool_name or "-",
                        e.session_id or "-",
                        e.detail,
                    ]
                    for e in report.evicted
                ],
                right=(1,),
            )
        )
    spared = {"live session": report.spared_live, "fetched recently": report.spared_recent_fetch}
    if any(spared.values()):
        parts.append(f"spared: {counts({k: v for k, v in spared.items() if v})}")
    if report.over_cap_bytes:
        parts.append(f"still {human_size(report.over_cap_bytes)} over the cap (protected blobs)")
    tomb_verb = "would expire" if dry_run else "expired"
    parts.append(
        f"tombstones {tomb_verb}: {report.tombstones_expired:,}"
        + ("" if dry_run else f"; idle sessions pruned: {report.sessions_pruned:,}")
    )
    return Outcome(data, "\n".join(parts))
