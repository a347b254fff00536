"""The ``stowage`` command line (``status``, ``blobs``, ``gc``, ``doctor``, ``replay``).

Host-free: it reads ``$HERMES_HOME/config.yaml`` itself and imports nothing
from hermes-agent, so it runs without Hermes installed.  ``replay`` alone
needs hermes-agent: it imports the host's compressor when it runs.  Installed as
``stowage.command`` (``[project.scripts] stowage = "stowage.command:main"``); the
``/stowage`` slash command in the host glue calls the same functions.
"""

from __future__ import annotations

from .main import main

__all__ = ["main"]
