"""The agent's read-back tools: their schemas, one dispatch with its error replies, and ``stowage_fetch``.

``stowage_grep`` (the whole session's search) is ``history_grep``'s; both
read their arguments through ``tool_args``.  Every reply is a JSON object,
bounded in size, and says what was cut and how to read further.  Handles are checked by the store (malformed, path-like,
unknown, ambiguous, another session's, evicted: each a clear error); user
regexes run through the safe-regex module (length caps, timeouts), so a
hostile pattern is an error, never a hang.
"""

from __future__ import annotations

import base64
import json
import logging
import time
from typing import Any, Callable

from ...blobstore import BlobStore, EvictedBlobError, StoreError
from ...blobstore.errors import describe_input
from ...blobstore.presentation.bounded import bound_text
from ...blobstore.retrieval.grep import grep_lines
from ...blobstore.retrieval.grep_prefilter import PrefilterStats, batch_pattern, prefiltered_lines
from ...blobstore.retrieval.jsonpath import JsonPathError, resolve_json_path, serialize_bounded
from ...blobstore.retrieval.safe_regex import PatternError
from ..chat.markers import GREP_KINDS
from .history_grep import grep_history
from .line_views import line_views_note, stored_line_views
from .message_parts import data_url
from .tool_args import FetchLimits, ToolError, int_arg, pattern_arg

FETCH = "stowage_fetch"
GREP = "stowage_grep"
MODES = ("stat", "range", "grep", "json", "full")
MAX_LINES = 2000
MAX_JSON_BYTES = 32 * 1024 * 1024
MAX_LINE_BYTES = 1 << 20
log = logging.getLogger(__name__)

FETCH_SCHEMA: dict[str, Any] = {
    "name": FETCH,
    "description": (
        "Read content Stowage stored instead of showing it in full: a large tool output (its preview names a "
        "handle), a pruned older tool output, or compacted conversation turns. Modes: stat (size, lines, origin), "
        "range (start/count lines, 1-based; unit=chars for 0-based character offsets, e.g. for one-line JSON), grep "
        "(regex pattern with context lines), json (a JSON path like items[0].name or a JSON Pointer), full (whole "
        "content, refused when large: use range or grep)."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "handle": {"type": "string", "description": "The hex handle shown in the preview or stub."},
            "mode": {"type": "string", "enum": list(MODES), "description": "What to read (default stat)."},
            "start": {"type": "integer", "description": "range: first line (1-based) or first character (0-based)."},
            "count": {
                "type": "integer",
                "description": "range: how many lines (default 100) or characters (default 4000).",
            },
            "unit": {"type": "string", "enum": ["lines", "chars"], "description": "range: lines (default) or chars."},
            "pattern": {
                "type": "string",
                "description": "grep: a regular expression (or literal text with literal=true).",
            },
            "literal": {"type": "boolean", "description": "grep: treat pattern as plain text."},
            "ignore_case": {"type": "boolean", "description": "grep: case-insensitive match."},
            "context": {"type": "integer", "description": "grep: lines of context around each match (default 2)."},
            "max_matches": {"type": "integer", "description": "grep: stop after this many matches (default 50)."},
            "path": {
                "type": "string",
                "description": "json: a path like $.items[0].name or a pointer like /items/0/name.",
            },
        },
        "required": ["handle"],
    },
}

GREP_SCHEMA: dict[str, Any] = {
    "name": GREP,
    "description": (
        "Search everything Stowage stored for this conversation: large tool outputs, older tool outputs (also "
        "those pruned from the context) and compacted turns. Returns matching lines with their handles, newest "
        "content first; read more with stowage_fetch. A reply with next_cursor has more to search: call again "
        "with cursor set to it."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "A regular expression (or plain text with literal=true)."},
            "literal": {"type": "boolean", "description": "Treat pattern as plain text."},
            "ignore_case": {"type": "boolean", "description": "Case-insensitive match."},
            "context": {"type": "integer", "description": "Lines of context around each match (default 1)."},
            "max_results": {"type": "integer", "description": "At most this many matching lines (default 20)."},
            "kind": {
                "type": "string",
                "enum": ["any", *(str(k) for k in GREP_KINDS)],
                "description": "Only large outputs (spill), pruned outputs or compacted turns (default any).",
            },
            "cursor": {"type": "string", "description": "Continue an earlier search: its reply's next_cursor."},
        },
        "required": ["pattern"],
    },
}


class FetchTools:
    """Answers the two tools for one session."""

    def __init__(
        self,
        store: BlobStore,
        session_id: Callable[[], str | None],
        limits: FetchLimits,
        preview_of: Callable[[str], "str | None"] | None = None,
    ) -> None:
        self.store = store
        self._session_id = session_id
        self.limits = limits
        self._preview_of = preview_of  # handle of an evicted original a view stub named -> its preview's handle

    @staticmethod
    def schemas() -> list[dict[str, Any]]:
        return [FETCH_SCHEMA, GREP_SCHEMA]

    def handle(self, name: str, args: Any) -> str:
        try:
            if not isinstance(args, dict):
                raise ToolError(f"arguments must be an object, got {type(args).__name__}")
            reply = self._fetch(args) if name == FETCH else self._grep_history(args) if name == GREP else None
            if reply is None:
                raise ToolError(f"unknown Stowage tool {describe_input(name)}")
        except ToolError as exc:
            reply = {"error": str(exc)}
        except StoreError as exc:
            reply = {"error": str(exc), "code": getattr(exc, "code", type(exc).__name__)}
            preview = self._preview_of(exc.handle) if self._preview_of and isinstance(exc, EvictedBlobError) else None
            if preview is not None:  # a stub named it; the cap spared its preview instead (store_session/pins.py)
                reply["error"] += f'. Its preview is still stored: stowage_fetch(handle="{preview}")'
                reply["preview_handle"] = preview
        except PatternError as exc:
            reply = {"error": str(exc)}
        except RecursionError:
            reply = {"error": "the content is nested too deeply to walk here; use mode=range or mode=grep"}
        except Exception as exc:  # the model gets an answer, never a traceback
            log.warning("stowage: %s failed on %s: %r", name, describe_input(args, 200), exc, exc_info=True)
            reply = {
                "error": f"{name} could not answer this request ({type(exc).__name__}); "
                "try other arguments or another mode",
                "code": "internal_error",
            }
        error = reply.get("error")
        if isinstance(error, str) and len(error) > 2000:  # errors may quote the model's own (huge) input
            reply["error"] = error[:2000] + "…"
        return json.dumps(reply, ensure_ascii=False)

    # -- stowage_fetch ----------------------------------------------------------
    def _fetch(self, args: dict[str, Any]) -> dict[str, Any]:
        mode = args.get("mode") or "stat"
        if mode not in MODES:
            raise ToolError(f"unknown mode {describe_input(mode)}; use one of {', '.join(MODES)}")
        sha = self.store.resolve(args.get("handle"), self._session_id())
        info = self.store.stat(sha)
        head = {"handle": info.handle, "mode": mode}
        if mode == "stat":
            reply = {**head, **_describe(info)}
        elif mode == "range":
            reply = {**head, **self._range(sha, info, args)}
        elif mode == "grep" and _media_type(info) is not None:
            raise ToolError(f"the content is {info.content_type}, not text: read it with mode=full or mode=range")
        elif mode == "grep":
            reply = {**head, **self._grep_blob(sha, args)}
        elif mode == "json":
            reply = {**head, **self._json(sha, info, args)}
        else:
            reply = {**head, **self._full(sha, info)}
        if mode in ("grep", "range") and args.get("unit") != "chars":
            self._name_line_views(reply, sha, info)
        try:  # after the read, and never in its way: a full disk must not cost the model its answer
            self.store.record_fetch(sha)
        except (StoreError, OSError) as exc:
            log.warning("stowage: could not count a fetch of %s: %s", info.handle, exc)
        return reply

    def _name_line_views(self, reply: dict[str, Any], sha: str, info: Any) -> None:
        """A one-line JSON result read by line: the reply names its strings stored unescaped, by handle."""
        views = stored_line_views(self.store, sha, info.size, info.line_count, self._session_id())
        if views:
            reply["line_views"] = [{"handle": v.handle, "path": v.path, "lines": v.lines} for v in views]
            reply["note"] = " ".join(filter(None, (reply.get("note"), line_views_note(views))))

    def _range(self, sha: str, info: Any, args: dict[str, Any]) -> dict[str, Any]:
        unit = args.get("unit") or "lines"
        media_type = _media_type(info)
        if media_type is not None:  # an image has no lines: its base64 text is paged by characters
            return self._base64_range(sha, info, media_type, args)
        if unit == "chars":
            total = info.char_count if info.char_count is not None else info.size
            start = int_arg(args, "start", 0, minimum=0)
            count = min(int_arg(args, "count", 4000, minimum=1), self.limits.fetch_max_chars)
            text = self.store.read_chars(sha, start, count)
            end = start + len(text)
            return {
                "unit": "chars",
                "start": start,
                "end": end,
                "total_chars": total,
                "text": text,
                "next_start": end if end < total else None,
            }
        if unit != "lines":
            raise ToolError(f"unknown unit {describe_input(unit)}; use lines or chars")
        start = int_arg(args, "start", 1, minimum=1)
        count = min(int_arg(args, "count", 100, minimum=1), MAX_LINES)
        if start > max(info.line_count, 1):
            raise ToolError(f"start={start} is past the end: the content has {info.line_count} lines")
        lines = self.store.read_lines(sha, start, count)
        width = len(str(start + len(lines)))
        text = "\n".join(f"{start + i:>{width}}| {line}" for i, line in enumerate(lines))
        bounded = bound_text(text, self.limits.fetch_max_chars, more_hint="use a smaller count or unit=chars")
        shown = bounded.text.count("\n") + 1 if bounded.cut_chars else len(lines)
        end_line = start + max(shown, 1) - 1
        reply = {
            "unit": "lines",
            "start": start,
            "end": end_line,
            "total_lines": info.line_count,
            "text": bounded.text,
            "next_start": end_line + 1 if end_line < info.line_count else None,
        }
        if bounded.cut_chars:
            reply["note"] = (
                f"{bounded.cut_chars:,} chars cut to stay under {self.limits.fetch_max_chars:,}; "
                "long lines: read them with unit=chars"
            )
        return reply

    def _grep(self, sha: str, args: dict[str, Any], *, context: int, max_matches: int, budget_s: float) -> Any:
        """Grep one blob, skipping line batches the pattern cannot match."""
        pattern = pattern_arg(args)
        prefilter = batch_pattern(
            args["pattern"], ignore_case=bool(args.get("ignore_case")), literal=bool(args.get("literal"))
        )
        stats = PrefilterStats()
        lines = prefiltered_lines(
            self.store.iter_line_batches(sha, max_line_bytes=MAX_LINE_BYTES),
            prefilter,
            context=context,
            stats=stats,
            deadline=time.monotonic() + budget_s,
        )
        result = grep_lines(lines, pattern, context=context, max_matches=max_matches, time_budget_s=budget_s)
        return result, (stats.lines if not result.truncated else result.scanned_lines + stats.skipped_lines)

    def _grep_blob(self, sha: str, args: dict[str, Any]) -> dict[str, Any]:
        result, scanned = self._grep(
            sha,
            args,
            context=min(int_arg(args, "context", 2, minimum=0), 20),
            max_matches=min(int_arg(args, "max_matches", 50, minimum=1), 500),
            budget_s=self.limits.grep_time_budget_s,
        )
        bounded = bound_text(result.render(), self.limits.fetch_max_chars, more_hint="narrow the pattern")
        reply: dict[str, Any] = {"matches": result.match_count, "scanned_lines": scanned, "text": bounded.text}
        if result.truncated:
            reply["truncated"] = result.reason
        if bounded.cut_chars:
            reply["note"] = f"{bounded.cut_chars:,} chars cut; narrow the pattern or lower max_matches"
        return reply

    def _json(self, sha: str, info: Any, args: dict[str, Any]) -> dict[str, Any]:
        path = args.get("path") or "$"
        if not isinstance(path, str):
            raise ToolError(f"path must be a string like $.items[0].name or /items/0, got {type(path).__name__}")
        if info.size > MAX_JSON_BYTES:
            raise ToolError(f"the content is {info.size:,} bytes, too large to parse as JSON here; use grep or range")
        try:
            document = json.loads(self.store.read_bytes(sha).decode("utf-8", "replace"))
        except ValueError as exc:
            raise ToolError(f"the content is not a JSON document ({exc}); use range or grep") from None
        except RecursionError:
            raise ToolError("the JSON is nested too deeply to parse here; use mode=range or mode=grep") from None
        try:
            value = resolve_json_path(document, path)
            serialized = serialize_bounded(value, self.limits.fetch_max_chars, path=str(path))
        except JsonPathError as exc:
            raise ToolError(str(exc)) from None
        except RecursionError:
            raise ToolError(
                "the JSON value is nested too deeply to show here; ask for a deeper path, "
                "or use mode=range or mode=grep"
            ) from None
        reply = {"path": path, "value": serialized.text}
        if serialized.truncated:
            reply["note"] = serialized.note
        return reply

    def _base64_range(self, sha: str, info: Any, media_type: str, args: dict[str, Any]) -> dict[str, Any]:
        """Characters ``start``.. of a media blob's base64 text (a data URL is ``data:<type>;base64,`` + it)."""
        total = base64_length(info.size)
        start = int_arg(args, "start", 0, minimum=0)
        count = min(int_arg(args, "count", 4000, minimum=1), self.limits.fetch_max_chars)
        first = start // 4 * 3  # each 4 base64 characters are 3 bytes
        data = self.store.read_bytes(sha, first, (start + count + 3) // 4 * 3 - first) if start < total else b""
        text = base64.b64encode(data).decode("ascii")[start % 4 : start % 4 + count]
        end = start + len(text)
        return {
            "unit": "chars",
            "media_type": media_type,
            "encoding": "base64",
            "start": start,
            "end": end,
            "total_chars": total,
            "text": text,
            "next_start": end if end < total else None,
        }

    def _full(self, sha: str, info: Any) -> dict[str, Any]:
        media_type = _media_type(info)
        if media_type is not None:
            chars = len(f"data:{media_type};base64,") + base64_length(info.size)
            if chars > self.limits.full_fetch_max_chars:
                raise ToolError(
                    f"the {media_type} content is {info.size:,} bytes, a {chars:,}-char data URL, over the "
                    f"full-fetch limit of {self.limits.full_fetch_max_chars:,}; page its base64 with mode=range, "
                    'unit="chars" (the data URL is "data:' + media_type + ';base64," followed by that text)'
                )
            return {
                "media_type": media_type,
                "encoding": "base64",
                "bytes": info.size,
                "data_url": data_url(media_type, self.store.read_bytes(sha)),
            }
        chars = info.char_count if info.char_count is not None else info.size
        if chars > self.limits.full_fetch_max_chars:
            raise ToolError(
                f"the content is {chars:,} chars, over the full-fetch limit of "
                f"{self.limits.full_fetch_max_chars:,}; use mode=range (start/count) or mode=grep"
            )
        return {"text": self.store.read_bytes(sha).decode("utf-8", "replace")}

    # -- stowage_grep -----------------------------------------------------------
    def _grep_history(self, args: dict[str, Any]) -> dict[str, Any]:
        return grep_history(args, store=self.store, session_id=self._session_id, limits=self.limits, grep=self._grep)


def _media_type(info: Any) -> str | None:
    """The media type of a blob read back as base64 (an image a compaction removed), else None (text)."""
    kind = info.content_type
    if "/" in kind and not kind.startswith("text/") and "json" not in kind:
        return str(kind)
    return None


def base64_length(size: int) -> int:
    return (size + 2) // 3 * 4


def _describe(info: Any) -> dict[str, Any]:
    origin = info.provenance[0] if info.provenance else None
    media_type = _media_type(info)
    if media_type is not None:
        return {
            "size_bytes": info.size,
            "media_type": media_type,
            "read_as": 'mode="full" returns a base64 data URL; mode="range" with unit="chars" pages its base64',
            "kind": origin.kind if origin else None,
            "stored_at": info.created_at,
            "fetch_count": info.fetch_count,
        }
    return {
        "size_bytes": info.size,
        "lines": info.line_count,
        "chars": info.char_count,
        "content_type": info.content_type,
        "kind": origin.kind if origin else None,
        "tool": origin.tool_name if origin else None,
        "arguments": origin.tool_args if origin else None,
        "stored_at": info.created_at,
        "fetch_count": info.fetch_count,
    }
