"""Typed records, above compaction and below the view: what a compaction, a session and each of its parts
did, what the host tells the engine, and the per-session files other processes read."""
