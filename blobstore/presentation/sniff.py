"""Cheap content classification, so each payload gets the preview that suits it.

Only a bounded prefix and suffix are inspected (plus one full JSON parse when
the whole payload fits in the sample), so sniffing a 100 MB output costs the
same as sniffing a 100 KB one.  The verdict is a hint for presentation, never a
guarantee: callers that need a parsed document still parse it themselves.
"""

from __future__ import annotations

import codecs
import json
from dataclasses import dataclass

from .signals import LOGISH_RE, iter_hits

__all__ = ["KINDS", "SniffResult", "sniff", "magic_label"]

KINDS = ("json", "jsonl", "log", "text", "binary")

DEFAULT_SAMPLE_CHARS = 64 * 1024
DEFAULT_HUGE_LINE_CHARS = 4096

# A few well-known signatures make a binary preview say what the bytes are.
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "ZIP archive"),
    (b"\x1f\x8b", "gzip data"),
    (b"\x7fELF", "ELF executable"),
    (b"SQLite format 3\x00", "SQLite database"),
    (b"BZh", "bzip2 data"),
    (b"\xfd7zXZ\x00", "xz data"),
    (b"\x28\xb5\x2f\xfd", "zstd data"),
    (b"RIFF", "RIFF container"),
    (b"\x00asm", "WebAssembly module"),
)


@dataclass(frozen=True)
class SniffResult:
    """What a payload looks like.

    ``kind`` is one of :data:`KINDS`.  ``huge_line`` marks payloads made of a
    few very long lines (minified JSON, base64, one-line escaped logs), for
    which line-based paging and previews are useless.  ``magic`` names a known
    binary format, else ``None``.
    """

    kind: str
    huge_line: bool = False
    magic: str | None = None


def magic_label(data: bytes) -> str | None:
    """Name of a known binary format from its leading bytes, or ``None``."""
    for prefix, label in _MAGIC:
        if data.startswith(prefix):
            return label
    return None


def _decode_sample(data: bytes, sample: int) -> tuple[str, str, bool]:
    """Decode a prefix and suffix of *data*; report whether it looks binary."""
    head_b = data[:sample]
    tail_b = data[-sample:] if len(data) > sample else b""
    if b"\x00" in head_b or b"\x00" in tail_b:
        return "", "", True
    dec = codecs.getincrementaldecoder("utf-8")("replace")
    head = dec.decode(head_b, final=len(data) <= sample)
    # Skip continuation bytes so a suffix cut mid-character decodes cleanly.
    i = 0
    while i < min(3, len(tail_b)) and 0x80 <= tail_b[i] < 0xC0:
        i += 1
    tail = tail_b[i:].decode("utf-8", "replace")
    bad = head.count("\ufffd") + tail.count("\ufffd")
    total = max(1, len(head) + len(tail))
    return head, tail, bad / total > 0.02


def _control_ratio(s: str) -> float:
    if not s:
        return 0.0
    ctrl = sum(1 for ch in s if ch < " " and ch not in "\n\r\t\f\v\x1b\b")
    return ctrl / len(s)


def _looks_like_jsonl(head: str) -> bool:
    """At least two complete leading lines that each parse as JSON containers."""
    lines = head.split("\n")
    complete = lines[:-1] if len(lines) > 1 else []
    parsed = 0
    for line in complete[:8]:
        s = line.strip()
        if not s:
            continue
        if s[0] not in "{[" or s[-1] not in "}]":
            return False
        try:
            json.loads(s)
        except ValueError:
            return False
        parsed += 1
    return parsed >= 2


def _classify_text(head: str, tail: str, whole: bool) -> str:
    lead = head.lstrip()[:1]
    trail = (tail or head).rstrip()[-1:]
    if lead in ("{", "[") or (lead == '"' and trail == '"'):
        if _looks_like_jsonl(head):
            return "jsonl"
        closes = {"{": "}", "[": "]", '"': '"'}[lead]
        if trail == closes:
            if not whole:
                return "json"
            try:
                json.loads(head)
                return "json"
            except (ValueError, RecursionError):
                pass
    lines = [ln[:200] for ln in (head[:32768] + "\n" + tail[-32768:]).split("\n") if ln.strip()][:300]
    if not lines:
        return "text"
    if any(lvl == 2 for _, lvl in iter_hits(head + "\n" + tail)):
        return "log"
    logish = sum(1 for ln in lines if LOGISH_RE.search(ln))
    return "log" if logish * 5 >= len(lines) else "text"


def _huge_line(head: str, tail: str, total_len: int, huge: int) -> bool:
    if total_len < huge:
        return False
    for part in (head, tail):
        if not part:
            continue
        if part.count("\n") > 3:
            return False
        if max(len(seg) for seg in part.split("\n")) < huge:
            return False
    return True


def sniff(
    data: str | bytes, *, sample_chars: int = DEFAULT_SAMPLE_CHARS, huge_line_chars: int = DEFAULT_HUGE_LINE_CHARS
) -> SniffResult:
    """Classify *data* by looking at most ``2 * sample_chars`` of it.

    Never raises; unknown shapes come back as ``text``.
    """
    try:
        sample = max(1024, int(sample_chars))
        if isinstance(data, (bytes, bytearray, memoryview)):
            raw = bytes(data[:sample]) if len(data) > 2 * sample else bytes(data)
            if len(data) > 2 * sample:
                raw_tail = bytes(data[-sample:])
                head, tail, binary = _decode_sample(raw + raw_tail, sample)
            else:
                head, tail, binary = _decode_sample(raw, sample)
            if binary:
                return SniffResult("binary", magic=magic_label(bytes(data[:32])))
            total = len(data)
            whole = total <= sample
        else:
            text = str(data)
            total = len(text)
            head = text[:sample]
            tail = text[-sample:] if total > sample else ""
            whole = total <= sample
            if "\x00" in head or "\x00" in tail:
                return SniffResult("binary")
        if _control_ratio(head[:4096]) > 0.1:
            return SniffResult("binary")
        kind = _classify_text(head, tail, whole)
        return SniffResult(kind, _huge_line(head, tail, total, huge_line_chars))
    except Exception:  # noqa: BLE001 - a sniffer must never take down the caller
        return SniffResult("text")
