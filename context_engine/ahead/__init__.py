"""Summaries prepared ahead: the next compaction's summary, written before the host asks for it.

``pace`` says when a request is near enough the trigger, ``job`` what the
summary is for (pure), ``worker`` runs it on a background thread and hands it
to the compaction that proves it is for the same content.  Whether to prepare
one at all is the one decision's (``policy/decision.py``).
"""

from .job import SummaryJob, build_job, clean_cut, prepared_prefix
from .worker import AheadSummaries

__all__ = ["AheadSummaries", "SummaryJob", "build_job", "clean_cut", "prepared_prefix"]
