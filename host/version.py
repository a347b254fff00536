"""Stowage's version, in a module that imports nothing.

The package root re-exports it; the command line and the manifest generator read it from here, so neither
imports the root (which registers with Hermes and imports the command line: an import circle).
"""

from __future__ import annotations

__version__ = "0.4.1"
