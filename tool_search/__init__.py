"""tool_search package."""
