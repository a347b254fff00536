"""Stowage's development harness (not part of the plugin).

A scripted OpenAI-compatible model (``fake_llm``), throw-away Hermes homes
with the plugin install routes (``hermes_home``), the scenario runner and
the driver it starts in a subprocess (``runner``, ``driver``), captured MCP
tool catalogs (``mcp_catalog``), synthetic transcripts (``transcripts``) and
the demo (``python -m stowage_dev.demo``).  Used by the demo, ``tests/e2e``
and ``bench/``; installed (editable) by ``python3 run.py setup`` from its own
``pyproject.toml``, never shipped in the wheel or the user-plugin copy.
"""
