"""An app's JSON-RPC through Helm: tool calls on the broker's path, reads, links, state."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from broker import Decision
from broker.widget_state import StateStore
from tests.helpers import ScriptedConfirmer, new_broker
from tests.unit.apps.app_setup import BOARD, FakeWindow, added, app_home, harness

pytestmark = pytest.mark.usefixtures("mcp_app_server")


async def test_initialize_answers_helms_context_and_capabilities(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker))
        answer = await h.ask("ui/initialize", {"appCapabilities": {}, "protocolVersion": "2026-01-26"})
    result = answer["result"]
    assert result["protocolVersion"] == "2026-01-26"
    assert result["hostContext"]["locale"] == "en-US"
    assert result["hostCapabilities"]["sandbox"] == {
        "permissions": {},
        "csp": {"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []},
    }  # what Helm applies: the board declares a frame domain, which stays blocked


async def test_a_read_tool_runs_and_answers_a_call_tool_result(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker))
        answer = await h.call("list_items")
    assert answer["result"]["structuredContent"] == {"items": ["first"]}
    assert answer["result"]["content"][0]["type"] == "text"


async def test_a_write_tool_is_confirmed_then_sent_and_audited(tmp_path: Path) -> None:
    confirm = ScriptedConfirmer(Decision.CONFIRMED)
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker), confirm=confirm)
        answer = await h.call("add_item", {"text": "second"})
        records = broker.audit.records()
    assert answer["result"]["structuredContent"] == {"items": ["first", "second"]}
    assert [(s.title, s.operation) for s in confirm.shown] == [("Confirm tool call", "add_item")]
    assert [(r.operation, r.decision, r.outcome) for r in records] == [
        ("add_item", "confirmed", "sending"),
        ("add_item", "confirmed", "ok"),
    ]


async def test_a_declined_write_sends_nothing_and_the_app_gets_declined(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker), confirm=ScriptedConfirmer(Decision.DECLINED))
        answer = await h.call("add_item", {"text": "never"})
        after = await h.call("list_items")
    assert answer["error"]["data"] == {"code": "declined"}
    assert after["result"]["structuredContent"] == {"items": ["first"]}


@pytest.mark.parametrize(
    ("tool", "why"),
    [
        pytest.param("model_only", "'model_only' is not declared for 'app'", id="visibility-without-app"),
        pytest.param("other_tool", "'other_tool' is not declared for 'app'", id="tool-of-another-server"),
        pytest.param("echo", "'echo' is not declared for 'app'", id="unlinked-model-tool"),
    ],
)
async def test_tools_the_app_may_not_call_are_refused_before_any_server_sees_them(
    tmp_path: Path, tool: str, why: str
) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker))
        answer = await h.call(tool)
    assert answer["error"]["data"] == {"code": "refused"}
    assert why in answer["error"]["message"]


async def test_resources_read_reaches_the_apps_own_and_pinned_resources_only(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker))
        own = await h.ask("resources/read", {"uri": BOARD})
        notes = await h.ask("resources/read", {"uri": "helm-test://notes/readme"})
        other = await h.ask("resources/read", {"uri": "file:///etc/passwd"})
    assert own["result"]["contents"][0]["uri"] == BOARD
    assert notes["result"]["contents"][0]["text"] == "notes of helm-test-app"
    assert not {"ttlMs", "cacheScope", "resultType"} & notes["result"].keys(), "only what the server sent"
    assert other["error"]["data"] == {"code": "refused"}


async def test_links_need_the_users_yes_and_chat_messages_are_not_supported(tmp_path: Path) -> None:
    window = FakeWindow(open_links=False)
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker), window=window)
        link = await h.ask("ui/open-link", {"url": "https://example.com/a?b=c"})
        script = await h.ask("ui/open-link", {"url": "javascript:alert(1)"})
        chat = await h.ask("ui/message", {"role": "user", "content": [{"type": "text", "text": "hi"}]})
    assert link["error"]["message"] == "Link opening denied by user"
    assert window.links == ["https://example.com/a?b=c"]
    assert "http and https links only" in script["error"]["message"]
    assert "not supported" in chat["error"]["message"]


async def test_model_context_is_kept_per_instance_and_display_modes_follow_the_app(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker))
        await h.ask("ui/initialize", {"appCapabilities": {"availableDisplayModes": ["inline", "fullscreen"]}})
        h.session.receive('{"jsonrpc":"2.0","method":"ui/notifications/initialized"}')
        await h.ask("ui/update-model-context", {"content": [{"type": "text", "text": "3 items"}]})
        full = await h.ask("ui/request-display-mode", {"mode": "fullscreen"})
        pip = await h.ask("ui/request-display-mode", {"mode": "pip"})
    assert h.session.contexts == {"i1": {"content": [{"type": "text", "text": "3 items"}]}}
    assert full["result"] == {"mode": "fullscreen"} and pip["result"] == {"mode": "fullscreen"}
    changed = [m for m in h.window.sent if m.get("method") == "ui/notifications/host-context-changed"]
    assert [m["params"] for m in changed] == [{"displayMode": "fullscreen"}]


async def test_app_state_survives_a_new_store_on_the_same_home(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        ext_id = await added(broker)
        h = await harness(broker, ext_id)
        saved = await h.ask("helm/state/set", {"state": {"filter": "open", "n": 2}})
        again = await harness(broker, ext_id)
        got = await again.ask("helm/state/get")
        other = await (await harness(broker, ext_id, instance="i2")).ask("helm/state/get")
    assert saved["result"] == {}
    assert got["result"] == {"state": {"filter": "open", "n": 2}}
    assert other["result"] == {"state": None}
    assert StateStore(tmp_path / "home").folder.is_dir()


async def test_teardown_waits_for_the_apps_answer_within_a_bound(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker))
        h.session.receive('{"jsonrpc":"2.0","method":"ui/notifications/initialized"}')
        silent = await h.session.teardown("closing", within=0.2)
        request = h.window.sent[-1]
        h.window.arrived.clear()
        waiting = h.session.teardown("closing", within=5.0)
        task = asyncio.ensure_future(waiting)
        await h.window.arrived.wait()
        rid = h.window.sent[-1]["id"]
        h.session.receive(f'{{"jsonrpc":"2.0","id":"{rid}","result":{{}}}}')
        answered = await task
    assert request["method"] == "ui/resource-teardown"
    assert silent is False and answered is True
