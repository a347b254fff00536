"""Offline replay of recorded sessions through a context engine, billed as a provider would.

Host-agnostic (nothing here imports Hermes): :mod:`.driver` plays the 0.19.0
host's call order around any duck-typed context engine, :mod:`.billing`
counts and prices the requests as sent, :mod:`.chain` reads and chains
transcripts, :mod:`.rough` re-implements the host's rough estimates, :mod:`.totals` sums
sessions per configuration with ratios to a baseline.  The
Hermes-side adapters (built-in compressor, Stowage with its middleware and
hooks) live in ``host/replay_host.py``; ``bench/bench_economy.py``
and the ``stowage replay`` command (``command/replay.py``) use both.
"""

from .billing import PRICE_MODELS, PriceModel, RequestBiller, SessionBill, TokenMeter
from .chain import DEFAULT_CHAIN, DataMissing, Session, Transcript, chain_sessions, chain_transcripts, read_transcripts
from .driver import HostDriver, Observer, ReplayTarget, SessionResult, StandInSummarizer, stand_in_summary

__all__ = [
    "DEFAULT_CHAIN", "DataMissing", "HostDriver", "Observer", "PRICE_MODELS", "PriceModel", "ReplayTarget",
    "RequestBiller", "Session", "SessionBill", "SessionResult", "StandInSummarizer", "TokenMeter", "Transcript",
    "chain_sessions", "chain_transcripts", "read_transcripts", "stand_in_summary",
]
