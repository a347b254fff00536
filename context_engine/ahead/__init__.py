"""Summaries prepared ahead: the next compaction's summary, written before the host asks for it.

``decide`` says when to start one, ``job`` what it is for (pure), ``worker``
runs it on a background thread and hands it to the compaction that proves
it is for the same content.
"""

from .decide import likely_used, should_prepare, take_early
from .job import SummaryJob, build_job, clean_cut, prepared_prefix
from .worker import AheadSummaries

__all__ = [
    "AheadSummaries",
    "SummaryJob",
    "build_job",
    "clean_cut",
    "likely_used",
    "prepared_prefix",
    "should_prepare",
    "take_early",
]
