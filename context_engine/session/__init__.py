"""One agent's session, above every room but the host adapter: its state, a compaction run on it,
request shaping, its status gathered from its parts."""
