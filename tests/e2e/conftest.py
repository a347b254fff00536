"""Fixtures for end-to-end tests against the real hermes-agent host.

* ``fake_llm``: a started :class:`FakeLLMServer` (stopped at teardown);
* ``make_home``: factory of :class:`HermesHome` wired to ``fake_llm``;
* ``hermes_home``: one default home (built-in compressor, no plugins).

Temp directories are removed at teardown; set ``STOWAGE_E2E_KEEP=1`` to keep
them (their paths are printed) when debugging a failure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from stowage_dev.fake_llm import FakeLLMServer
from stowage_dev.hermes_home import HermesHome
from stowage_dev.tempdirs import scratch_dir

HomeFactory = Callable[..., HermesHome]


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    """The scripted model server, listening on 127.0.0.1:<random port>."""
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def e2e_tmp() -> Iterator[Path]:
    """A temp directory removed at teardown (kept with ``STOWAGE_E2E_KEEP=1``)."""
    yield from scratch_dir("stowage-e2e-")


@pytest.fixture
def make_home(fake_llm: FakeLLMServer, e2e_tmp: Path) -> HomeFactory:
    """``make_home(engine="compressor", plugins=(), config=None,
    context_length=128000, stowage_route=None)``.

    ``stowage_route`` installs Stowage as ``"entrypoint"`` (nothing to do: the
    project is pip-installed), ``"symlink"`` or ``"copy"`` (user folder, the
    pip distribution hidden from the subprocess); it does not enable it.
    """
    counter = iter(range(1_000_000))

    def factory(
        *,
        engine: str = "compressor",
        plugins: tuple[str, ...] | list[str] = (),
        config: dict[str, Any] | None = None,
        context_length: int = 128_000,
        stowage_route: str | None = None,
        **kwargs: Any,
    ) -> HermesHome:
        home = HermesHome(
            root=e2e_tmp / f"home{next(counter)}",
            base_url=fake_llm.base_url,
            engine=engine,
            plugins_enabled=list(plugins),
            extra_config=dict(config or {}),
            context_length=context_length,
            **kwargs,
        )
        if stowage_route in ("symlink", "copy"):
            home.install_stowage_user_plugin(stowage_route)
        elif stowage_route not in (None, "entrypoint"):
            raise ValueError(f"unknown stowage_route {stowage_route!r}")
        return home

    return factory


@pytest.fixture
def hermes_home(make_home: HomeFactory) -> HermesHome:
    """A home with the built-in compressor and no plugins enabled."""
    return make_home()
