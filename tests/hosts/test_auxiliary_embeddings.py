"""``embedding_endpoint: auxiliary``: the endpoint and key come from Hermes's auxiliary client, resolved per use."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from stowage.host import tool_search_glue

FAKE_KEY = "sk-test-synthetic-aux-0000"


def patch_client(monkeypatch: pytest.MonkeyPatch, client: Any) -> list[str]:
    import agent.auxiliary_client as aux

    tasks: list[str] = []

    def fake(task: str = "", **_: Any) -> tuple[Any, str]:
        tasks.append(task)
        return client, "some-chat-model"

    monkeypatch.setattr(aux, "get_text_auxiliary_client", fake)
    return tasks


def test_the_auxiliary_providers_base_url_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = patch_client(monkeypatch, SimpleNamespace(base_url="http://127.0.0.1:8080/v1/", api_key=FAKE_KEY))
    assert tool_search_glue.auxiliary_embedding_endpoint() == ("http://127.0.0.1:8080/v1", FAKE_KEY)
    assert tasks == ["compression"]


@pytest.mark.parametrize("client", [None, SimpleNamespace(base_url=None, api_key=None)])
def test_no_openai_compatible_provider_is_a_clear_reason(monkeypatch: pytest.MonkeyPatch, client: Any) -> None:
    patch_client(monkeypatch, client)
    with pytest.raises(ValueError, match="no OpenAI-compatible base URL"):
        tool_search_glue.auxiliary_embedding_endpoint()


def test_registration_installs_the_resolver(monkeypatch: pytest.MonkeyPatch) -> None:
    from stowage.context_engine.session import tool_search_embeddings as wiring

    ctx = SimpleNamespace(register_middleware=lambda *a: None)
    tool_search_glue.register_tool_search(ctx)
    assert wiring._auxiliary == [tool_search_glue.auxiliary_embedding_endpoint]
