"""Policy, above the view: when a session compacts (trigger, thresholds, the anti-thrash governor) and
the part of a request no compaction can shrink."""
