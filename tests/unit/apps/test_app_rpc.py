"""Each decision of an app session (broker/apps/rpc.py), one at a time, on one real app server.

One broker with the SDK-built board app added serves the whole file (its server starts once);
every test opens its own session with an instance of its own, so no test sees another's rate
limit, model context or state. Only the window around the app is a fake (``FakeWindow``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from broker import Broker, Decision, WriteSummary
from broker.apps.rpc import MAX_MESSAGE_CHARS, MAX_PENDING
from broker.ratelimit import CALLS_PER_MINUTE
from tests.helpers import ScriptedConfirmer, new_broker
from tests.servers.services import mcp_app_command
from tests.unit.apps.app_setup import FakeWindow, Harness, added, app_home, harness
from tests.unit.kinds.mcp_setup import add_stdio

pytestmark = [pytest.mark.usefixtures("mcp_app_server"), pytest.mark.asyncio(loop_scope="module")]

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, SERVER_ERROR = (
    -32700,
    -32600,
    -32601,
    -32602,
    -32000,
)
INITIALIZED = '{"jsonrpc":"2.0","method":"ui/notifications/initialized"}'
_instances = itertools.count(1)


class App:
    """The broker and the added app every test of this file shares."""

    def __init__(self, broker: Broker, ext_id: str) -> None:
        self.broker, self.ext_id = broker, ext_id

    async def session(self, **kw: Any) -> Harness:
        return await harness(self.broker, self.ext_id, instance=f"t{next(_instances)}", **kw)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def app(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[App]:
    tmp = tmp_path_factory.mktemp("app-rpc")
    async with new_broker(tmp / "home") as broker:
        await app_home(broker, tmp)
        yield App(broker, await added(broker))


def sent_now(h: Harness, text: str) -> list[dict[str, Any]]:
    """What the session sends for ``text`` before ``receive`` returns."""
    h.window.sent.clear()
    h.session.receive(text)
    return list(h.window.sent)


# -- messages that are not requests ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code"),
    [
        pytest.param("{not json", PARSE_ERROR, id="not-json"),
        pytest.param('{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', PARSE_ERROR, id="a-key-twice"),
        pytest.param('{"jsonrpc":"1.0","id":1,"method":"ping"}', INVALID_REQUEST, id="another-version"),
        pytest.param('{"id":1,"method":"ping"}', INVALID_REQUEST, id="no-version"),
        pytest.param('[{"jsonrpc":"2.0","id":1,"method":"ping"}]', INVALID_REQUEST, id="a-batch"),
        pytest.param('{"jsonrpc":"2.0","id":1.5,"method":"ping"}', INVALID_REQUEST, id="a-float-id"),
        pytest.param('{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_REQUEST, id="a-boolean-id"),
        pytest.param('{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID_REQUEST, id="a-null-id"),
        pytest.param('{"jsonrpc":"2.0","id":[1],"method":"ping"}', INVALID_REQUEST, id="a-list-id"),
    ],
)
async def test_a_message_that_is_no_request_is_refused_at_once_with_a_null_id(
    app: App, text: str, code: int
) -> None:
    h = await app.session()
    answers = sent_now(h, text)
    assert len(answers) == 1
    assert answers[0]["id"] is None
    assert answers[0]["error"]["code"] == code


async def test_a_message_with_an_id_but_no_method_or_answer_is_refused_under_its_id(app: App) -> None:
    h = await app.session()
    (answer,) = sent_now(h, '{"jsonrpc":"2.0","id":"x1","params":{}}')
    assert answer["id"] == "x1"
    assert answer["error"] == {"code": INVALID_REQUEST, "message": "neither a request nor an answer"}


async def test_a_message_of_the_largest_size_is_answered_and_one_character_more_is_refused(app: App) -> None:
    h = await app.session()
    head = '{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"'
    largest = head + "x" * (MAX_MESSAGE_CHARS - len(head) - 3) + '"}}'
    assert len(largest) == MAX_MESSAGE_CHARS
    assert sent_now(h, largest) == [{"jsonrpc": "2.0", "id": "big", "result": {}}]
    refused = sent_now(h, largest.replace('"pad":"', '"pad":"x', 1))
    assert refused[0]["id"] is None
    assert refused[0]["error"]["code"] == INVALID_REQUEST
    assert "too_large" in refused[0]["error"]["message"]


async def test_a_request_that_needs_no_wait_is_answered_before_receive_returns(app: App) -> None:
    h = await app.session()
    assert sent_now(h, '{"jsonrpc":"2.0","id":"p","method":"ping"}') == [
        {"jsonrpc": "2.0", "id": "p", "result": {}}
    ]


class RawWindow(FakeWindow):
    """Keeps the text exactly as it would cross Qt's bridge to the app."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def send(self, text: str) -> None:
        self.texts.append(text)
        super().send(text)


async def test_a_lone_surrogate_reaches_the_app_escaped_as_valid_utf8_not_dropped_by_the_bridge(
    app: App,
) -> None:
    window = RawWindow()
    h = await app.session(window=window)
    h.session.receive('{"jsonrpc":"2.0","id":"a\\ud800b","method":"ping"}')
    h.session.receive('{"jsonrpc":"2.0","id":"café","method":"ping"}')
    lone, accented = window.texts
    lone.encode("utf-8")  # Qt's Signal(str) drops what UTF-8 cannot hold: here nothing is
    assert json.loads(lone)["id"] == "a\ud800b"  # the app gets exactly the id it sent
    assert "café" in accented  # ordinary text is not escaped


async def test_a_stray_answer_and_notifications_are_taken_silently(app: App) -> None:
    h = await app.session()
    for text in (
        '{"jsonrpc":"2.0","id":"helm-99","result":{}}',
        '{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"x"}}',
        '{"jsonrpc":"2.0","method":"ui/notifications/size-changed","params":{"height":3}}',
    ):
        assert sent_now(h, text) == []
    assert not h.session.initialized


async def test_an_apps_log_message_is_logged_and_other_notifications_are_not(
    app: App, caplog: pytest.LogCaptureFixture
) -> None:
    h = await app.session()
    with caplog.at_level(logging.INFO, logger="helm.apps"):
        h.session.receive('{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"hello"}}')
        h.session.receive('{"jsonrpc":"2.0","method":"ui/notifications/size-changed","params":{"data":"no"}}')
        h.session.receive('{"jsonrpc":"2.0","method":"notifications/progress","params":{"data":"no"}}')
    said = [r.getMessage() for r in caplog.records if r.name == "helm.apps"]
    assert said == [f'app {app.ext_id} says: "hello"']


async def test_an_apps_size_reaches_the_window_in_whole_pixels_and_anything_else_as_unknown(app: App) -> None:
    h = await app.session()
    sizes: list[tuple[int | None, int | None]] = []
    h.session.sized = lambda width, height: sizes.append((width, height))
    for params in (
        {"width": 320, "height": 240.7},
        {"width": True, "height": -1},
        {"width": 999_999, "height": 1e6},
        {"width": 0, "height": "3"},
        {},
    ):
        message = {"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": params}
        assert sent_now(h, json.dumps(message)) == []
    h.session.receive('{"jsonrpc":"2.0","method":"ui/notifications/size-changed","params":[1,2]}')
    assert sizes == [(320, 240), (None, None), (999_999, None), (0, None), (None, None)]


# -- requests in flight --------------------------------------------------------------------------


async def test_requests_beyond_the_cap_in_flight_are_refused_and_the_cap_frees_as_they_end(app: App) -> None:
    h = await app.session()
    release = asyncio.Event()

    async def slow(_params: dict[str, Any]) -> dict[str, Any]:  # the app's server taking its time
        await release.wait()
        return {}

    h.session._handlers["helm/slow"] = slow
    for round_ in range(2):  # the second round finds every slot of the first freed
        h.window.sent.clear()
        for i in range(MAX_PENDING + 1):
            h.session.receive(json.dumps({"jsonrpc": "2.0", "id": f"{round_}-{i}", "method": "helm/slow"}))
        refused = [m["id"] for m in h.window.sent if "error" in m]
        assert refused == [f"{round_}-{MAX_PENDING}"]
        assert "too many requests in flight (at most 64)" in h.window.sent[0]["error"]["message"]
        release.set()
        async with asyncio.timeout(10):
            while len(h.window.sent) < MAX_PENDING + 1:
                await asyncio.sleep(0.01)
        release.clear()
        assert [m.get("result") for m in h.window.sent[1:]] == [{}] * MAX_PENDING


class WaitingConfirmer:
    """A dialog nobody answers: it notes when it is shown and when it is cancelled."""

    def __init__(self) -> None:
        self.shown = asyncio.Event()
        self.cancelled = False

    async def __call__(self, summary: WriteSummary) -> Decision:
        self.shown.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await asyncio.sleep(0.05)  # a dialog takes a moment to close
            self.cancelled = True
            raise
        raise AssertionError("never answered")


async def test_closing_the_session_cancels_what_is_running_and_waits_for_it(app: App) -> None:
    confirm = WaitingConfirmer()
    h = await app.session(confirm=confirm)
    params = {"name": "add_item", "arguments": {"text": "never"}}
    h.session.receive(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}))
    async with asyncio.timeout(20):
        await confirm.shown.wait()
    await h.session.aclose()
    assert confirm.cancelled
    assert [r.outcome for r in app.broker.activity.recent if r.instance == h.session.ctx.instance] == [
        "cancelled"
    ]
    assert [m for m in h.window.sent if m.get("id") == 1] == []


async def test_a_failure_inside_helm_is_answered_as_an_internal_error(
    app: App, caplog: pytest.LogCaptureFixture
) -> None:
    class BrokenWindow(FakeWindow):
        def set_display_mode(self, mode: str) -> str:
            raise RuntimeError("the window is gone")

    h = await app.session(window=BrokenWindow())
    with caplog.at_level(logging.ERROR, logger="helm.apps"):
        answer = await h.ask("ui/request-display-mode", {"mode": "fullscreen"})
    assert answer["error"] == {"code": SERVER_ERROR, "message": "internal error"}
    assert "the window is gone" not in json.dumps(answer)
    assert any("failed inside Helm" in r.getMessage() for r in caplog.records)


# -- Helm's own messages -------------------------------------------------------------------------


async def test_nothing_is_sent_to_an_app_before_it_says_it_initialized(app: App) -> None:
    h = await app.session()
    h.session.notify_context({"theme": "dark"})
    h.session.notify("ui/notifications/tool-input", {"arguments": {}})
    assert await h.session.teardown("closing") is False
    assert h.window.sent == []
    assert not h.session.started.is_set()
    h.session.receive(INITIALIZED)
    assert h.session.initialized and h.session.started.is_set()
    h.session.notify_context({"theme": "dark"})
    h.session.notify("ui/notifications/tool-input", {"arguments": {}})
    assert h.window.sent == [
        {"jsonrpc": "2.0", "method": "ui/notifications/host-context-changed", "params": {"theme": "dark"}},
        {"jsonrpc": "2.0", "method": "ui/notifications/tool-input", "params": {"arguments": {}}},
    ]


@pytest.mark.parametrize("answer", ['"result":{}', '"error":{"code":-1,"message":"busy"}'])
async def test_teardown_ends_when_the_app_answers_even_with_an_error(app: App, answer: str) -> None:
    h = await app.session()
    h.session.receive(INITIALIZED)
    task = asyncio.ensure_future(h.session.teardown("closing"))  # the default bound of 3 s
    await h.window.arrived.wait()
    request = h.window.sent[-1]
    assert request["method"] == "ui/resource-teardown" and request["params"] == {"reason": "closing"}
    h.session.receive(f'{{"jsonrpc":"2.0","id":"{request["id"]}",{answer}}}')
    assert await task is True


async def test_a_teardown_the_app_never_answers_keeps_nothing_waiting(app: App) -> None:
    h = await app.session()
    h.session.receive(INITIALIZED)
    assert await h.session.teardown("closing", within=0.05) is False
    assert h.session._waiting == {}
    late = h.window.sent[-1]["id"]
    assert sent_now(h, f'{{"jsonrpc":"2.0","id":"{late}","result":{{}}}}') == []


async def test_a_message_too_large_for_the_frame_is_counted_and_in_activity(app: App) -> None:
    h = await app.session()
    h.session.refused_large("tools/call", MAX_MESSAGE_CHARS + 1)
    h.session.refused_large("", MAX_MESSAGE_CHARS + 2)
    mine = [r for r in app.broker.activity.recent if r.instance == h.session.ctx.instance]
    assert h.session.refused == 2
    assert [(r.connection, r.operation, r.outcome) for r in mine] == [
        ("app", "tools/call", "too_large"),
        ("app", "message", "too_large"),
    ]


# -- the methods ---------------------------------------------------------------------------------


async def test_display_modes_follow_what_the_app_said_it_supports(app: App) -> None:
    h = await app.session()
    await h.ask("ui/initialize", {"appCapabilities": {"availableDisplayModes": ["inline", "huge"]}})
    h.session.receive(INITIALIZED)
    assert h.session.app_modes == ("inline",)
    full = await h.ask("ui/request-display-mode", {"mode": "fullscreen"})
    assert full["result"] == {"mode": "inline"} and h.window.mode == "inline"
    other = await app.session()
    await other.ask("ui/initialize", {"appCapabilities": {}})
    full = await other.ask("ui/request-display-mode", {"mode": "fullscreen"})
    huge = await other.ask("ui/request-display-mode", {"mode": "huge"})
    assert full["result"] == huge["result"] == {"mode": "fullscreen"}


async def test_a_tool_result_keeps_its_text_readable_and_only_a_tool_error_is_an_error(app: App) -> None:
    h = await app.session(confirm=ScriptedConfirmer(Decision.CONFIRMED))
    added_ = await h.call("add_item", {"text": "café"})
    assert "isError" not in added_["result"]
    items = added_["result"]["structuredContent"]
    assert "café" in items["items"]
    assert added_["result"]["content"] == [{"type": "text", "text": json.dumps(items, ensure_ascii=False)}]
    failed = await h.call("add_item", {"text": 5})  # the server's own schema check fails
    assert failed["result"]["isError"] is True
    assert "result" in failed and "error" not in failed


async def test_a_refusal_tells_the_app_when_to_try_again(app: App) -> None:
    h = await app.session()
    answers = [await h.ask("helm/state/get") for _ in range(CALLS_PER_MINUTE + 1)]
    assert all("result" in a for a in answers[:CALLS_PER_MINUTE])
    data = answers[-1]["error"]["data"]
    assert data["code"] == "rate_limited" and data["retryAfter"] > 0


async def test_a_tool_the_server_no_longer_shows_to_apps_is_refused(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker))
        add_stdio(broker, "board", mcp_app_command("--model-only", "list_items"))  # the server changed
        hidden = await h.call("list_items")
    assert hidden["error"]["data"] == {"code": "refused"}
    assert "'list_items' is not visible to apps" in hidden["error"]["message"]


async def test_a_method_helm_does_not_offer_is_method_not_found(app: App) -> None:
    h = await app.session()
    answer = await h.ask("sampling/createMessage")
    assert answer["error"] == {
        "code": METHOD_NOT_FOUND,
        "message": "Helm does not offer 'sampling/createMessage' to apps",
    }


@pytest.mark.parametrize(
    "params",
    [{"arguments": {}}, {"name": 3, "arguments": {}}, {"name": "list_items", "arguments": []}],
    ids=["no-name", "a-name-not-text", "arguments-not-an-object"],
)
async def test_a_tool_call_without_a_name_and_an_arguments_object_is_invalid_params(
    app: App, params: dict[str, Any]
) -> None:
    h = await app.session()
    answer = await h.ask("tools/call", params)
    assert answer["error"]["code"] == INVALID_PARAMS
    assert not [r for r in app.broker.activity.recent if r.instance == h.session.ctx.instance]


async def test_a_model_context_of_64_kib_is_kept_and_one_byte_more_is_refused(app: App) -> None:
    h = await app.session()
    framing = len(json.dumps({"text": ""}))
    largest = {"text": "é" * ((65_536 - framing) // 2)}
    assert len(json.dumps(largest, ensure_ascii=False).encode()) == 65_536
    assert (await h.ask("ui/update-model-context", largest))["result"] == {}
    assert h.session.contexts[h.session.ctx.instance] == largest
    refused = await h.ask("ui/update-model-context", {"text": "x" * (65_536 - framing + 1)})
    assert refused["error"]["data"] == {"code": "too_large"}
    assert h.session.contexts[h.session.ctx.instance] == largest


async def test_a_link_opens_only_when_the_user_says_yes(app: App) -> None:
    yes = await app.session(window=FakeWindow(open_links=True))
    no = await app.session(window=FakeWindow(open_links=False))
    opened = await yes.ask("ui/open-link", {"url": "https://example.com/a"})
    declined = await no.ask("ui/open-link", {"url": "https://example.com/a"})
    refused = await yes.ask("ui/open-link", {"url": "javascript:alert(1)"})
    assert opened["result"] == {} and yes.window.links == ["https://example.com/a"]
    assert declined["error"] == {"code": SERVER_ERROR, "message": "Link opening denied by user"}
    assert refused["error"]["data"] == {"code": "refused"} and len(yes.window.links) == 1


async def test_a_display_mode_that_changes_is_announced_and_one_that_does_not_is_not(app: App) -> None:
    h = await app.session()
    h.session.receive(INITIALIZED)
    for mode in ("fullscreen", "fullscreen", "inline"):
        await h.ask("ui/request-display-mode", {"mode": mode})
    changed = [
        m["params"] for m in h.window.sent if m.get("method") == "ui/notifications/host-context-changed"
    ]
    assert changed == [{"displayMode": "fullscreen"}, {"displayMode": "inline"}]


async def test_app_state_set_is_kept_for_the_instance_and_a_refused_set_says_so(app: App) -> None:
    h = await app.session()
    assert (await h.ask("helm/state/set", {"state": {"n": 1}}))["result"] == {}
    assert (await h.ask("helm/state/get"))["result"] == {"state": {"n": 1}}
    too_big = await h.ask("helm/state/set", {"state": "x" * (65 * 1024)})
    assert too_big["error"]["data"] == {"code": "too_large"}
    assert (await h.ask("helm/state/get"))["result"] == {"state": {"n": 1}}


async def test_a_chat_message_is_refused_and_the_window_says_so(app: App) -> None:
    h = await app.session()
    notices: list[str] = []
    h.session.notices = notices.append
    answer = await h.ask("ui/message", {"role": "user", "content": [{"type": "text", "text": "hi"}]})
    assert answer["error"]["code"] == SERVER_ERROR
    assert "not supported: Helm has no chat" in answer["error"]["message"]
    assert notices == ["The app tried to send a chat message; Helm has no chat, so it was refused."]
