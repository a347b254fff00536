"""One session's blob store: opened lazily, spill of oversized tool outputs
(``spill``), pruned outputs and compacted windows archived (``archive``), the
``stowage_fetch`` / ``stowage_grep`` tools (``fetch_tools``) and the
``stowage.store`` keys (``settings``).  ``session.StoreSession`` ties them
together for the engine.
"""
