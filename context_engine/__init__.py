"""context_engine package."""
