"""Shared set-up for mcp and tdt-mcp tests: server profiles, extensions and short limits."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from broker import Broker, CallContext
from broker.kinds.mcp import tdt
from broker.mcp import profiles, servers
from broker.mcp.session import McpLimits
from tests.helpers import manifest_dict, setup_extension
from tests.support import REPO

TDT_LIKE = [sys.executable, str(REPO / "tests" / "servers" / "tdt_like.py")]
TOKEN = "mcp-tok-5e4d3c2b1a"
SHORT = McpLimits(call_timeout=1.5, start_timeout=20.0, cancel_grace=1.0)


def use_limits(monkeypatch: pytest.MonkeyPatch, limits: McpLimits = SHORT) -> None:
    """Brokers built after this use ``limits`` for both MCP kinds."""
    monkeypatch.setattr(servers, "DEFAULT_LIMITS", limits)
    monkeypatch.setattr(tdt, "DEFAULT_LIMITS", limits)


def add_stdio(
    broker: Broker,
    name: str,
    command: list[str],
    *,
    token_env: str | None = None,
    pass_env: tuple[str, ...] = (),
) -> None:
    raw: dict[str, Any] = {"command": command, "token_env": token_env, "pass_env": list(pass_env)}
    profiles.MCP_SERVERS.store(broker.home, broker.credentials).save(
        profiles.parse(name, raw), {"token": TOKEN if token_env else None}
    )


def add_http(broker: Broker, name: str, url: str, *, token: str | None = TOKEN) -> None:
    raw = {"url": url, "auth": "bearer" if token else "none"}
    profiles.MCP_SERVERS.store(broker.home, broker.credentials).save(
        profiles.parse(name, raw), {"token": token}
    )


async def mcp_extension(
    broker: Broker,
    tmp_path: Path,
    server: str,
    reads: list[str],
    writes: list[str] | None = None,
    *,
    approved: bool = True,
) -> CallContext:
    conn: dict[str, Any] = {"id": "m", "kind": "mcp", "server": server, "operations": reads}
    if writes:
        conn["writes"] = writes
    manifest = manifest_dict([conn], write=bool(writes))
    return await setup_extension(broker, tmp_path, manifest, approved=approved)


def code(result: dict[str, Any]) -> str | None:
    return None if result["ok"] else str(result["error"]["code"])
