"""The message vocabulary, above redaction: plain chat message dicts, Stowage's markers and stub lines,
token counts, what a provider accepts."""
