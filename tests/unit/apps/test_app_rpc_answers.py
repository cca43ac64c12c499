"""What an app is answered, in JSON-RPC terms, for requests Helm refuses or cannot serve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import new_broker
from tests.unit.apps.app_setup import FakeWindow, added, app_home, harness

pytestmark = pytest.mark.usefixtures("mcp_app_server")

METHOD_NOT_FOUND, INVALID_PARAMS, SERVER_ERROR = -32601, -32602, -32000


async def test_a_method_helm_does_not_offer_is_method_not_found(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker))
        answer = await h.ask("sampling/createMessage")
    assert answer["error"]["code"] == METHOD_NOT_FOUND
    assert "Helm does not offer 'sampling/createMessage' to apps" in answer["error"]["message"]


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"arguments": {}}),
        ("tools/call", {"name": "list_items", "arguments": []}),
    ],
)
async def test_a_request_without_its_required_params_is_invalid_params(
    tmp_path: Path, method: str, params: dict[str, object]
) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker))
        answer = await h.ask(method, params)
    assert answer["error"]["code"] == INVALID_PARAMS


async def test_a_model_context_of_64_kib_is_kept_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    framing = len(json.dumps({"text": ""}))
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker))
        kept = await h.ask("ui/update-model-context", {"text": "é" * ((65_536 - framing) // 2)})
        refused = await h.ask("ui/update-model-context", {"text": "x" * (65_536 - framing + 1)})
    assert kept == {"jsonrpc": "2.0", "id": kept["id"], "result": {}}
    assert refused["error"]["code"] == SERVER_ERROR
    assert refused["error"]["data"] == {"code": "too_large"}
    assert h.session.contexts["i1"] == {"text": "é" * ((65_536 - framing) // 2)}


@pytest.mark.parametrize(
    ("url", "opened"),
    [
        ("https://example.com/" + "a" * (4096 - 20), True),
        ("https://example.com/" + "a" * (4096 - 19), False),
        ("HTTP://127.0.0.1/x", True),
        ("javascript:alert(1)", False),
        ("file:///etc/passwd", False),
    ],
)
async def test_an_app_may_ask_to_open_only_http_links_of_at_most_4096_characters(
    tmp_path: Path, url: str, opened: bool
) -> None:
    window = FakeWindow(open_links=True)
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker), window=window)
        answer = await h.ask("ui/open-link", {"url": url})
    if opened:
        assert answer["result"] == {} and window.links == [url]
    else:
        assert answer["error"]["code"] == SERVER_ERROR and window.links == []


async def test_a_link_the_user_declines_is_answered_as_denied(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker), window=FakeWindow(open_links=False))
        answer = await h.ask("ui/open-link", {"url": "https://example.com/"})
    assert answer["error"] == {"code": SERVER_ERROR, "message": "Link opening denied by user"}
