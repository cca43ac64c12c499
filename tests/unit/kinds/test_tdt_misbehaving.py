"""The tdt-mcp kind against a TDT-like server that misbehaves on purpose
(tests/servers/tdt_like.py): what the real TDT never does, Helm still answers in TDT's envelope."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from broker import Broker, CallContext
from broker.workspaces import set_everyday, set_tdt_command
from tests.helpers import manifest_dict, new_broker, setup_extension
from tests.unit.kinds.mcp_setup import TDT_LIKE, use_limits

TDT_KEYS = {"api_version", "ok", "data", "coverage", "warnings", "error"}


@pytest.fixture(autouse=True)
def short_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    use_limits(monkeypatch)


async def tdt_extension(broker: Broker, tmp_path: Path) -> CallContext:
    conn: dict[str, Any] = {
        "id": "tdt",
        "kind": "tdt-mcp",
        "operations": ["tdt_workspace_status", "plain", "crash", "hang"],
        "writes": ["tdt_brain_names_apply"],
    }
    ctx = await setup_extension(broker, tmp_path, manifest_dict([conn], write=True))
    set_tdt_command(broker.home, "ws", TDT_LIKE)
    set_everyday(broker.home, "ws", True)
    return ctx


async def test_a_result_that_is_no_envelope_is_unavailable_in_the_tdt_shape(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        ctx = await tdt_extension(broker, tmp_path)
        result = await broker.call(ctx, "tdt", "plain", {})
    assert set(result) == TDT_KEYS and result["api_version"] == 1
    assert set(result["error"]) == {"code", "message", "retry"}
    assert (result["error"]["code"], result["error"]["retry"]) == ("unavailable", "safe")


async def test_a_read_that_hangs_times_out_and_may_be_retried(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        ctx = await tdt_extension(broker, tmp_path)
        hung = await broker.call(ctx, "tdt", "hang", {})
        again = await broker.call(ctx, "tdt", "tdt_workspace_status", {})
    assert (hung["error"]["code"], hung["error"]["retry"]) == ("timeout", "safe")
    assert again["ok"] is True


async def test_a_crashed_tdt_child_is_started_again_on_the_next_call(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        ctx = await tdt_extension(broker, tmp_path)
        crashed = await broker.call(ctx, "tdt", "crash", {})
        again = await broker.call(ctx, "tdt", "tdt_workspace_status", {})
    assert (crashed["error"]["code"], crashed["error"]["retry"]) == ("unavailable", "safe")
    assert again["ok"] is True
    assert again["data"] == {"projects": 2, "reminders": 1}
