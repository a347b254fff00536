"""Offline replay of recorded sessions through a context engine, billed as a provider would.

Host-agnostic (nothing here imports Hermes), one job per module:

* :mod:`.driver`      the host loop: the 0.19.0 host's call order around any duck-typed context engine;
* :mod:`.compaction`  the host's side of a compaction (keywords passed, the human turn kept, writes after);
* :mod:`.wire`        the wire format: messages as sent, tool calls read once;
* :mod:`.billing`     requests counted and priced as sent (prompt cache by common prefix);
* :mod:`.target`      what a session is played through and what it reports; :mod:`.stand_in` the summarizer;
* :mod:`.chain`       transcripts read (bounded, a bad line skipped) and chained; :mod:`.rough` the host's
  rough estimates; :mod:`.totals` sums per configuration with ratios to a baseline.

The Hermes-side adapters (built-in compressor, Stowage with its middleware and
hooks) are glue and live in ``command/replay/hermes_engines.py``;
``bench/bench_economy.py`` and the ``stowage replay`` command
(``command/replay/``) use both.
"""

from .billing import PRICE_MODELS, PriceModel, RequestBiller, SessionBill, TokenMeter
from .chain import DEFAULT_CHAIN, DataMissing, Session, Transcript, chain_sessions, chain_transcripts, read_transcripts
from .driver import HostDriver
from .stand_in import StandInSummarizer, stand_in_summary
from .target import Observer, ReplayTarget, SessionResult

__all__ = [
    "DEFAULT_CHAIN",
    "DataMissing",
    "HostDriver",
    "Observer",
    "PRICE_MODELS",
    "PriceModel",
    "ReplayTarget",
    "RequestBiller",
    "Session",
    "SessionBill",
    "SessionResult",
    "StandInSummarizer",
    "TokenMeter",
    "Transcript",
    "chain_sessions",
    "chain_transcripts",
    "read_transcripts",
    "stand_in_summary",
]
