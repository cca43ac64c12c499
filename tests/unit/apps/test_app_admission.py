"""Every request of an MCP App that does work passes the broker's one admission.

The app server here misbehaves on purpose (``--leak``): its notes resource and one of its tools
hand back the token Helm gave it. The server is real (stdio, the ext-apps SDK); only the window
around the app is a fake.
"""

from __future__ import annotations

import json
from pathlib import Path

from broker import Broker
from broker.ratelimit import CALLS_PER_MINUTE
from broker.redact import REDACTED
from tests.helpers import new_broker
from tests.servers.services import mcp_app_command
from tests.unit.apps.app_setup import Harness, added, app_home, harness
from tests.unit.kinds.mcp_setup import TOKEN, add_stdio

NOTES = "helm-test://notes/readme"
STATE_BYTES = 60 * 1024


async def leaky_app(broker: Broker, tmp_path: Path) -> Harness:
    await app_home(broker, tmp_path)
    add_stdio(broker, "board", mcp_app_command("--leak", "BOARD_TOKEN"), token_env="BOARD_TOKEN")
    return await harness(broker, await added(broker))


async def test_resources_read_scrubs_the_token_the_server_was_given_as_tools_call_does(
    tmp_path: Path,
) -> None:
    async with new_broker(tmp_path / "home") as broker:
        h = await leaky_app(broker, tmp_path)
        read = await h.ask("resources/read", {"uri": NOTES})
        tool = await h.call("list_items")
        audit = (tmp_path / "home" / "audit.jsonl").read_text("utf-8")
    text = read["result"]["contents"][0]["text"]
    assert text == f"notes of helm-test-app token={REDACTED}"
    assert TOKEN not in json.dumps(read) and TOKEN not in json.dumps(tool)
    assert tool["result"]["structuredContent"]["leaked"] == f" token={REDACTED}"
    redacted = [json.loads(line) for line in audit.splitlines() if '"redacted"' in line]
    assert {r["operation"] for r in redacted} == {"resources/read", "list_items"}
    assert TOKEN not in audit


async def test_after_stop_an_app_reaches_nothing_and_every_request_is_in_activity(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        h = await leaky_app(broker, tmp_path)
        before = await h.ask("resources/read", {"uri": NOTES})
        broker.activity.stop("ws", h.session.ctx.extension)
        refused = [
            await h.ask("resources/read", {"uri": NOTES}),
            await h.call("list_items"),
            await h.ask("helm/state/set", {"state": {"n": 1}}),
            await h.ask("helm/state/get"),
            await h.ask("ui/update-model-context", {"content": []}),
            await h.ask("ui/open-link", {"url": "https://example.com/"}),
        ]
        records = [(r.connection, r.operation, r.outcome) for r in broker.activity.recent]
    assert "result" in before
    for answer in refused:
        assert answer["error"]["data"] == {"code": "refused"}
        assert "the user stopped" in answer["error"]["message"]
    assert h.window.links == []  # no dialog was shown
    assert h.session.contexts == {}
    assert records == [
        ("app", "resources/read", "ok"),
        ("app", "resources/read", "refused"),
        ("app", "list_items", "refused"),
        ("$state", "set", "refused"),
        ("$state", "get", "refused"),
        ("$app", "ui/update-model-context", "refused"),
        ("$app", "ui/open-link", "refused"),
    ]


async def test_app_state_writes_are_capped_per_instance_in_size_and_rate(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        ext_id = await added(broker)
        h = await harness(broker, ext_id)
        answers = [
            await h.ask("helm/state/set", {"state": [i, "x" * STATE_BYTES]})
            for i in range(CALLS_PER_MINUTE + 10)
        ]
        other = await harness(broker, ext_id, instance="i2")
        too_big = await other.ask("helm/state/set", {"state": "x" * (65 * 1024)})
        kept = await other.ask("helm/state/get")
    accepted = [a for a in answers if "result" in a]
    refusals = [a["error"] for a in answers if "error" in a]
    assert len(accepted) == CALLS_PER_MINUTE
    assert len(refusals) == 10
    assert all(e["data"]["code"] == "rate_limited" and e["data"]["retryAfter"] > 0 for e in refusals)
    assert "rate limit of 60 calls per minute" in refusals[0]["message"]
    assert too_big["error"]["data"] == {"code": "too_large"}
    assert kept["result"] == {"state": None}


async def test_model_context_updates_are_capped_per_instance_in_size_and_rate(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        ext_id = await added(broker)
        h = await harness(broker, ext_id)
        big = {"content": [{"type": "text", "text": "x" * (65 * 1024)}]}
        too_big = await h.ask("ui/update-model-context", big)
        answers = [
            await h.ask("ui/update-model-context", {"content": [{"type": "text", "text": str(i)}]})
            for i in range(CALLS_PER_MINUTE + 5)
        ]
    assert too_big["error"]["data"] == {"code": "too_large"}
    assert "larger than 64 KiB" in too_big["error"]["message"]
    codes = [a["error"]["data"]["code"] if "error" in a else "ok" for a in answers]
    assert codes == ["ok"] * (CALLS_PER_MINUTE - 1) + ["rate_limited"] * 6
    assert h.session.contexts["i1"] == {"content": [{"type": "text", "text": str(CALLS_PER_MINUTE - 2)}]}


async def test_a_tool_no_longer_visible_to_apps_is_refused_once_admitted_and_recorded(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker))
        add_stdio(broker, "board", mcp_app_command("--model-only", "list_items"))  # the server changed
        hidden = await h.call("list_items")
        records = [(r.connection, r.operation, r.outcome) for r in broker.activity.recent]
    assert hidden["error"]["data"] == {"code": "refused"}
    assert "'list_items' is not visible to apps" in hidden["error"]["message"]
    assert records == [("app", "list_items", "refused")]
