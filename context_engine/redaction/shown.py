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
* :func:`mask_logs` puts :class:`MaskingFilter` on Stowage's loggers, so a
  log line or traceback that quotes an error is masked too.

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


def mask_logs(package: str) -> int:
    """Put the mask on ``package``'s logger and every logger below it created so far; how many got it."""
    added = 0
    names = [package, *(name for name in logging.Logger.manager.loggerDict if name.startswith(package + "."))]
    for name in names:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
            added += 1
    return added
