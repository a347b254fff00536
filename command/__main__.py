"""``python -m stowage.command``."""

from .main import main

raise SystemExit(main())
