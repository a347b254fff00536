"""Fixtures for end-to-end tests against the real hermes-agent host.

* ``fake_llm``: a started :class:`FakeLLMServer` (stopped at teardown);
* ``make_home``: factory of :class:`HermesHome` wired to ``fake_llm``;
* ``hermes_home``: one default home (built-in compressor, no plugins);
* ``shared_llm`` / ``shared_home``: the same, module-scoped, for a module whose tests share one session;
* ``compacted_session``: one real session that compacted once, shared by the tests that only read it.

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

from .compacted_session import CompactedSession, run_compacted_session

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


def home_factory(llm: FakeLLMServer, root: Path) -> HomeFactory:
    """``factory(engine="compressor", plugins=(), config=None, context_length=128000, stowage_route=None)``.

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
            root=root / f"home{next(counter)}",
            base_url=llm.base_url,
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
def make_home(fake_llm: FakeLLMServer, e2e_tmp: Path) -> HomeFactory:
    """Homes wired to ``fake_llm`` (see :func:`home_factory`)."""
    return home_factory(fake_llm, e2e_tmp)


# -- one session shared by the tests of a module -----------------------------------------------------
# A module whose tests only read what one session did runs it once in a module-scoped fixture built on these
# (each test still asserts its own check, so each fails on its own).


@pytest.fixture(scope="module")
def shared_llm() -> Iterator[FakeLLMServer]:
    """A scripted model server for the whole module."""
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def shared_home(shared_llm: FakeLLMServer) -> Iterator[HomeFactory]:
    """Homes wired to ``shared_llm``, removed after the module (kept with ``STOWAGE_E2E_KEEP=1``)."""
    for root in scratch_dir("stowage-e2e-module-"):
        yield home_factory(shared_llm, root)


@pytest.fixture(scope="session")
def compacted_session() -> Iterator[CompactedSession]:
    """One Stowage session that compacted once in the real host (see compacted_session.py), run once for the
    compaction, status, summary and lossless tests that read it."""
    with FakeLLMServer() as server:
        for root in scratch_dir("stowage-e2e-compacted-"):
            yield run_compacted_session(server, home_factory(server, root))


@pytest.fixture
def hermes_home(make_home: HomeFactory) -> HermesHome:
    """A home with the built-in compressor and no plugins enabled."""
    return make_home()
