"""``python -m stowage.cli``."""

from .main import main

raise SystemExit(main())
