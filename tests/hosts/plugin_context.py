"""A recording stand-in of the host's PluginContext, as the catalog validator's import probe uses."""

from __future__ import annotations

from typing import Any


class RecordingCtx:
    """Records every ``register_*`` call; ``middleware=False`` is a host before 0.17.0."""

    def __init__(self, *, middleware: bool = True) -> None:
        self.engines: list[Any] = []
        self.hooks: list[str] = []
        self.tools: list[str] = []
        self.middleware: list[str] = []
        self.commands: list[str] = []
        if middleware:
            self.register_middleware = lambda kind, fn, **_: self.middleware.append(kind)

    def register_context_engine(self, engine: Any) -> None:
        self.engines.append(engine)

    def register_hook(self, name: str, fn: Any) -> None:
        self.hooks.append(name)

    def register_tool(self, name: str = "", *args: Any, **kwargs: Any) -> None:
        self.tools.append(name or kwargs.get("name", ""))

    def register_command(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.commands.append(name)
