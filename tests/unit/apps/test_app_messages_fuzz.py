"""Random and hostile JSON-RPC from an app always gets one answer — a result or an error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from broker.ratelimit import CallAdmission
from tests.helpers import new_broker
from tests.unit.apps.app_setup import added, app_home, harness

METHODS = (
    "tools/call", "resources/read", "ui/open-link", "ui/update-model-context", "helm/state/get",
    "helm/state/set", "ui/initialize", "ui/request-display-mode", "ui/message", "ping",
)  # fmt: skip
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
JSON = st.recursive(
    SCALARS | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
KEYS = st.sampled_from(("name", "arguments", "uri", "url", "state", "mode", "content", "appCapabilities"))
PARAMS = st.dictionaries(KEYS | st.text(max_size=8), JSON, max_size=4) | JSON
REQUESTS = st.tuples(st.sampled_from(METHODS) | st.text(max_size=30), PARAMS)


def drawn(count: int) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []

    @given(REQUESTS)
    @settings(max_examples=count, database=None, deadline=None)
    def collect(request: tuple[str, Any]) -> None:
        found.append(request)

    collect()
    return found


async def test_every_random_request_gets_exactly_one_answer_and_helm_keeps_working(tmp_path: Path) -> None:
    requests = drawn(150)
    async with new_broker(tmp_path / "home") as broker:
        broker.admission = CallAdmission(per_minute=10**6)  # every request reaches its handler
        await app_home(broker, tmp_path)
        h = await harness(broker, await added(broker))
        answers = [await h.ask(method, params) for method, params in requests]
        h.session.receive("{not json")
        h.session.receive(json.dumps({"jsonrpc": "2.0", "id": [1], "method": "ping"}))
        still = await h.call("list_items")
    for answer in answers:
        assert ("result" in answer) != ("error" in answer)
        if "error" in answer:
            assert isinstance(answer["error"]["message"], str)
            assert answer["error"]["message"] != "internal error"
    assert still["result"]["structuredContent"]["items"][0] == "first"
