"""One compaction as pure functions, above summary: prune, choose the window, summarize, assemble,
and the dry run of it."""
