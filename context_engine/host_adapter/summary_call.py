"""The summary call the engine asks of its host, as the host's glue sees it.

The glue (``host/aux_summary.py``, ``host/hermes_engine.py``) provides the
summary model (``session.limits.SummaryModel``: a prompt and the runtime in,
the reply text out).  It raises :class:`SummaryFailure`, whose kind decides
what the compaction does (auth and quota abort, the rest falls back); error
texts it quotes are masked with :func:`shown` first; the time left of the
compaction's deadline comes as the call's ``timeout``.  These are named
here, beside the host contract, so the glue imports only the adapter, config
and records (``tests/test_import_layers.py``).
"""

from __future__ import annotations

from ..redaction.shown import shown
from ..summary.reply import SummaryFailure

__all__ = ["SummaryFailure", "shown"]
