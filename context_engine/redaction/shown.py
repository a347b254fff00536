"""The one gate for text Stowage writes to disk or shows, as :mod:`..summary.egress` is for what it sends.

A summary model that fails echoes what it was given: an httpx error names the
URL with its ``?key=``, a gateway quotes the ``Authorization`` header.  That
text becomes an error message, which travels to the status file, the summary
log, ``get_status()``, ``stowage status``/``summary``, the dashboard's JSON,
the replay report and log lines.  Each of those passes here:

* :func:`shown` masks one text, :func:`shown_error` an exception as
  ``Type: message`` (masked before any cut);
* :func:`shown_record` masks every string of a JSON-like record in one batch
  (identifiers readers match on, such as ``session_id``, stay as written);
* :func:`mask_logs` masks every record of Stowage's loggers (those made later
  too), so a log line or traceback that quotes an error is masked as well.

Masking is idempotent, so a text masked where it was born and again where
it is written or shown is unchanged by the second pass.
"""

from __future__ import annotations

import logging
from typing import Any, TypeVar

from .masking import mask, unescaped_masked
from .redact import redact_many

__all__ = ["MaskingFilter", "mask_logs", "shown", "shown_error", "shown_record"]

# Identifiers that readers match on: masking one would hide the record from its own session.
KEPT_KEYS = frozenset({"session_id", "parent_session_id", "sha", "sha256", "handle"})
# No rule masks a text this short (a key, a separator and a secret need more).
_SHORTEST_MASKED = 6

T = TypeVar("T")


def shown(text: str) -> str:
    """``text`` masked, ready to be written or shown."""
    return mask(text) if isinstance(text, str) else text


def shown_error(exc: BaseException) -> str:
    """``Type: message`` of ``exc``, masked whole (callers may cut it afterwards)."""
    message = str(exc)
    return f"{type(exc).__name__}: {mask(message)}" if message else type(exc).__name__


def shown_record(value: T) -> T:
    """A copy of ``value`` (dicts, lists, tuples, strings, plain values) with every string masked.

    Dict keys stay (they are field names); the values of :data:`KEPT_KEYS`
    stay.  All strings are masked in one :func:`.redact_many` batch.
    """
    found: list[str] = []
    _collect(value, found)
    if not found:
        return value
    unique = list(dict.fromkeys(found))
    masked = dict(zip(unique, redact_many([unescaped_masked(text) for text in unique]), strict=True))
    if all(masked[text] == text for text in unique):
        return value
    return _rebuilt(value, masked)


def _collect(value: Any, found: list[str]) -> None:
    if isinstance(value, str):
        if len(value) >= _SHORTEST_MASKED:
            found.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in KEPT_KEYS:
                _collect(item, found)
    elif isinstance(value, list) or type(value) is tuple:
        for item in value:
            _collect(item, found)


def _rebuilt(value: Any, masked: dict[str, str]) -> Any:
    if isinstance(value, str):
        return masked.get(value, value)
    if isinstance(value, dict):
        return {key: item if key in KEPT_KEYS else _rebuilt(item, masked) for key, item in value.items()}
    if isinstance(value, list):
        return [_rebuilt(item, masked) for item in value]
    if type(value) is tuple:
        return tuple(_rebuilt(item, masked) for item in value)
    return value


class MaskingFilter(logging.Filter):
    """Masks a log record's message and traceback text before any handler formats it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string is the handler's to report
            return True
        masked = mask(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:  # handlers use exc_text when it is set
            record.exc_text = mask(logging.Formatter().formatException(record.exc_info))
        return True


_FILTER = MaskingFilter()


class _MaskingHandler(logging.NullHandler):
    """Emits nothing: its filter masks each record in place as the record passes up the package's logger.

    A logger's own filters see only records logged on that logger, so a filter
    put on the package's loggers misses every module logger created later (a
    module imported lazily).  Handlers see the records of every logger below
    theirs, and ``callHandlers`` walks from the record's logger upwards, so
    this handler masks the record before any handler above the package
    (Hermes's, the root's) formats it, however late its logger was made.
    """

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.addFilter(_FILTER)

    def handle(self, record: logging.LogRecord) -> bool:
        # NullHandler.handle skips filters; the filter is the point here
        return bool(self.filter(record))


def mask_logs(package: str) -> int:
    """Mask every log record of ``package`` and its loggers, now and later made; 1 if this call put the mask on."""
    logger = logging.getLogger(package)
    if any(isinstance(handler, _MaskingHandler) for handler in logger.handlers):
        return 0
    logger.addHandler(_MaskingHandler())
    return 1
