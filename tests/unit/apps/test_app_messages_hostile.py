"""Random and hostile JSON-RPC from an app, against a real session on the SDK-built app server.

Whatever an app sends — requests to every method Helm offers with parameters of any shape,
unknown methods, ids of every JSON type, notifications, stray answers, other JSON-RPC versions,
text that is not JSON, nesting deeper than any parser takes, duplicate keys — every request is
answered exactly once (a result or an error), every message that is not a request,
notification or answer is refused, nothing raises inside Helm, and nothing is kept per message:
no task, no waiter, no context beyond the instance's one.

Hypothesis runs derandomized under CI (tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker import Decision
from broker.apps.rpc import MAX_CONTEXT_BYTES, MAX_PENDING
from tests.helpers import ScriptedConfirmer, new_broker
from tests.unit.apps.app_setup import Harness, added, app_home, harness

pytestmark = pytest.mark.usefixtures("mcp_app_server")

FUZZ = settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
ANSWER_SECONDS = 30.0
_ids = itertools.count(1)

METHODS = ["ui/initialize", "ping", "tools/call", "resources/read", "ui/open-link", "ui/message",
           "ui/update-model-context", "ui/request-display-mode", "helm/state/get", "helm/state/set",
           "tools/list", "ui/resource-teardown", "", "__proto__", "constructor"]  # fmt: skip
NOTIFICATIONS = ["ui/notifications/initialized", "notifications/message", "ui/notifications/size-changed"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=16,
)  # fmt: skip

urls = st.sampled_from(
    ["https://example.com/", "javascript:alert(1)", "https://a.example\\@b.example/", "https://a@b.example/",
     "https://bank.example" + "\n" * 12 + "@evil.example/", "http://127.0.0.1:9/x", "", "https://\u202e.example/"]
) | st.text(max_size=40)  # fmt: skip

PARAMS = {
    "tools/call": st.fixed_dictionaries(
        {"name": st.sampled_from(["list_items", "add_item", "model_only", "echo"]) | st.text(max_size=8)},
        optional={"arguments": json_values},
    ),
    "resources/read": st.fixed_dictionaries({"uri": st.sampled_from(["ui://helm-test/board", "file:///etc/passwd"])
                                             | json_values}),
    "ui/open-link": st.fixed_dictionaries({"url": urls | json_values}),
    "ui/request-display-mode": st.fixed_dictionaries({"mode": st.sampled_from(["inline", "fullscreen", "pip"])
                                                      | json_values}),
    "helm/state/set": st.fixed_dictionaries({"state": json_values}),
    "ui/update-model-context": st.dictionaries(st.text(max_size=8), json_values, max_size=3),
}  # fmt: skip


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, str]:
    """(message text, what Helm owes it: ``answer``, an answer with its own id)."""
    method = draw(st.sampled_from(METHODS) | st.text(max_size=20))
    params = draw(PARAMS.get(method, json_values))
    rid: Any = draw(st.sampled_from(["int", "str"]))
    rid = next(_ids) if rid == "int" else f"fuzz-{next(_ids)}"
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if draw(st.booleans()):
        message["params"] = params
    return json.dumps(message), "answer"


@st.composite
def others(draw: st.DrawFn) -> tuple[str, str]:
    """Notifications and stray answers (owed ``nothing``), broken messages (owed a ``refusal``
    with id null), and text that may be either (``either``)."""
    kind = draw(st.sampled_from(["notification", "odd-id", "answer", "version", "not-object", "raw", "deep"]))
    if kind == "notification":
        method = draw(st.sampled_from(NOTIFICATIONS + METHODS))
        return json.dumps({"jsonrpc": "2.0", "method": method, "params": draw(json_values)}), "nothing"
    if kind == "odd-id":
        rid = draw(
            st.none()
            | st.booleans()
            | st.floats(allow_nan=False, allow_infinity=False)
            | st.lists(st.integers(), max_size=2)
        )
        return json.dumps({"jsonrpc": "2.0", "id": rid, "method": draw(st.sampled_from(METHODS))}), "refusal"
    if kind == "answer":
        return json.dumps(
            {"jsonrpc": "2.0", "id": draw(st.sampled_from(["helm-1", 7, "x"])), "result": draw(json_values)}
        ), "nothing"
    if kind == "version":
        return json.dumps(
            {"jsonrpc": draw(st.sampled_from(["1.0", "2", None, 2.0])), "id": 1, "method": "ping"}
        ), "refusal"
    if kind == "not-object":
        return json.dumps(
            draw(st.lists(json_values, max_size=3) | st.integers() | st.text(max_size=10))
        ), "refusal"
    if kind == "deep":
        depth = draw(st.integers(min_value=1_100, max_value=3_000))
        return '{"jsonrpc":"2.0","method":"ping","params":' + "[" * depth + "]" * depth + "}", "either"
    return draw(st.sampled_from(['{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', '{"jsonrpc":"2.0"',
                                 "NaN", '{"jsonrpc":"2.0","id":1,"method":"ping","params":NaN}', ""])
                | st.text(max_size=30)), "either"  # fmt: skip


class World:
    """One broker with the board app added, one session, and the loop that runs them."""

    def __init__(self, loop: asyncio.AbstractEventLoop, h: Harness) -> None:
        self.loop, self.h = loop, h


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("app-fuzz")
    loop = asyncio.new_event_loop()
    broker = new_broker(tmp / "home")
    loop.run_until_complete(broker.__aenter__())
    try:

        async def setup() -> Harness:
            await app_home(broker, tmp)
            return await harness(broker, await added(broker), confirm=ScriptedConfirmer(Decision.DECLINED))

        yield World(loop, loop.run_until_complete(setup()))
    finally:
        loop.run_until_complete(broker.__aexit__(None, None, None))
        loop.run_until_complete(asyncio.sleep(0))
        loop.close()


async def exchange(h: Harness, messages: list[tuple[str, str]]) -> list[dict[str, Any]]:
    h.window.sent.clear()
    owed = [json.loads(text)["id"] for text, expect in messages if expect == "answer"]
    for text, _answered in messages:
        h.session.receive(text)
    async with asyncio.timeout(ANSWER_SECONDS):  # bounded: a request never answered fails the test
        while not {m.get("id") for m in h.window.sent if "method" not in m} >= set(owed) or h.session._tasks:
            await asyncio.sleep(0.005)
    return list(h.window.sent)


@FUZZ
@given(messages=st.lists(requests() | others(), min_size=1, max_size=12))
def test_every_request_is_answered_once_every_broken_message_refused_and_nothing_is_kept(
    world: World, messages: list[tuple[str, str]]
) -> None:
    h = world.h
    sent = world.loop.run_until_complete(exchange(h, messages))
    answers = [m for m in sent if "method" not in m]
    owed = [json.loads(text)["id"] for text, expect in messages if expect == "answer"]
    for rid in owed:
        mine = [a for a in answers if a.get("id") == rid]
        assert len(mine) == 1, (rid, mine)
        assert ("result" in mine[0]) != ("error" in mine[0])
    for answer in answers:
        assert answer.get("error", {}).get("message") != "internal error", answer
        assert answer.get("id") is None or answer.get("id") in owed
    refused_broken = [a for a in answers if a.get("id") is None]
    assert all(a["error"]["code"] in (-32700, -32600) for a in refused_broken)
    expected = [expect for _text, expect in messages]
    low, high = expected.count("refusal"), expected.count("refusal") + expected.count("either")
    assert low <= len(refused_broken) <= high, (expected, refused_broken)
    assert not h.session._tasks and not h.session._waiting
    assert set(h.session.contexts) <= {"i1"}
    context = h.session.contexts.get("i1")
    assert len(json.dumps(context, ensure_ascii=False).encode()) <= MAX_CONTEXT_BYTES


def test_requests_beyond_the_cap_in_flight_are_refused_at_once_and_the_rest_answered(world: World) -> None:
    h = world.h
    release = asyncio.Event()

    async def slow(_params: dict[str, Any]) -> dict[str, Any]:  # a request that takes its time
        await release.wait()
        return {}

    async def scenario() -> tuple[list[dict[str, Any]], int]:
        h.window.sent.clear()
        for i in range(MAX_PENDING + 5):
            h.session.receive(json.dumps({"jsonrpc": "2.0", "id": f"slow-{i}", "method": "helm/slow"}))
        refused_at_once = [m for m in h.window.sent if "error" in m]
        pending = len(h.session._tasks)
        release.set()
        await exchange(h, [])
        return refused_at_once, pending

    h.session._handlers["helm/slow"] = slow
    try:
        refused, pending = world.loop.run_until_complete(scenario())
    finally:
        del h.session._handlers["helm/slow"]
    assert pending == MAX_PENDING
    assert [m["id"] for m in refused] == [f"slow-{i}" for i in range(MAX_PENDING, MAX_PENDING + 5)]
    assert all("too many requests in flight" in m["error"]["message"] for m in refused)
    assert len([m for m in h.window.sent if m.get("result") == {}]) == MAX_PENDING
