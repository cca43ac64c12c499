"""The organisation's policy for MCP Apps, with the real SDK-built app server: which servers'
apps may run, and whether their resource domains may ever be allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.apps import review
from broker.errors import PolicyError
from tests.helpers import new_broker
from tests.unit.apps.app_setup import BOARD, added, app_home, harness
from tests.unit.policy.policy_setup import PolicyFile

WORDS = "refused by your organisation's policy"
NOTES = "helm-test://notes/readme"


async def test_an_app_of_a_server_the_policy_does_not_name_is_not_added(tmp_path: Path, policy: PolicyFile):
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        policy.write({"apps": {"servers": [{"url": "https://apps.example.com/*"}]}})
        reviewed = await review.review(broker, "ws", "board", BOARD)  # the user may look
        with pytest.raises(PolicyError, match=rf"{WORDS} \(apps\.servers\): apps of MCP server 'board'"):
            await review.add(broker, reviewed, ())
        assert broker.home.settings().workspace("ws").extensions == {}


async def test_an_added_app_reaches_nothing_once_the_policy_leaves_its_server_out(
    tmp_path: Path, policy: PolicyFile
):
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker))
        assert "result" in await h.ask("resources/read", {"uri": NOTES})
        policy.write({"apps": {"servers": [{"command": "/usr/bin/true"}]}})
        refused = [await h.ask("resources/read", {"uri": NOTES}), await h.call("list_items")]
    for answer in refused:
        assert answer["error"]["data"] == {"code": "refused"}
        assert f"{WORDS} (apps.servers)" in answer["error"]["message"]


async def test_resource_domains_the_policy_never_allows_stop_an_app_that_allowed_them(
    tmp_path: Path, policy: PolicyFile
):
    async with new_broker(tmp_path / "home") as broker:
        await app_home(broker, tmp_path, "--resource", "https://cdn.example.com")
        ext_id = await added(broker, allow=("https://cdn.example.com",))
        policy.write({"apps": {"resource_domains": False}})
        decision = broker.standing("ws", ext_id)
        assert decision.forbidden is not None and decision.forbidden.rule == "apps.resource_domains"
        policy.remove()
        assert broker.standing("ws", ext_id).allows_calls
