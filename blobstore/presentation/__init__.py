"""How stored text is shown to a reader: content sniffing, signal lines,
JSON-string unescaping, excerpts and size-bounded text.

Pure functions over text and bytes.  Imports nothing from the storage
modules of :mod:`blobstore`; only the JSON path type from
:mod:`blobstore.retrieval.jsonpath` (an excerpt names the paths it shows in
the same syntax a reader fetches them with).
"""
