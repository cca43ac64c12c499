"""Shared set-up for files kind tests: a workspace, a project and an extension reading them."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from broker import Broker, CallContext
from broker.workspaces import add_project
from tests.helpers import manifest_dict, new_broker, setup_extension


def sha(data: str | bytes) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


def code(result: dict[str, Any]) -> str | None:
    return None if result["ok"] else result["error"]["code"]


def files_conn(
    paths: list[str],
    *,
    root: str = "workspace",
    ops: tuple[str, ...] = ("list", "read", "write"),
    cid: str = "fs",
) -> dict[str, Any]:
    return {"id": cid, "kind": "files", "root": root, "paths": paths, "operations": list(ops)}


@dataclass
class Setup:
    broker: Broker
    ctx: CallContext
    root: Path
    tmp: Path

    async def call(self, op: str, args: dict[str, Any], conn: str = "fs") -> dict[str, Any]:
        return await self.broker.call(self.ctx, conn, op, args)


async def make_setup(
    broker: Broker, tmp: Path, conns: list[dict[str, Any]], *, instance: str = "test-instance"
) -> Setup:
    write = any("write" in c["operations"] for c in conns)
    ctx = await setup_extension(broker, tmp, manifest_dict(conns, write=write))
    ctx = CallContext(ctx.workspace, ctx.extension, instance)
    return Setup(broker, ctx, tmp / "root", tmp)


def register_project(broker: Broker, project_id: str, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    add_project(broker.home, "ws", project_id, folder)


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    async with new_broker(tmp_path / "home") as b:
        yield b
