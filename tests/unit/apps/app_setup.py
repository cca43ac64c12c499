"""Shared set-up for MCP Apps tests: a home with the SDK-built app server, and a fake window.

The server (tests/servers/node/mcp-app.mjs) is real: the ext-apps SDK's server helpers over
stdio. Only the window around the app is a fake here — what the user answers to a link, and
the display modes the window can take; the web view tests use the real one.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from broker import Broker, CallContext
from broker.apps import review
from broker.apps.rpc import AppSession
from broker.apps.verify import open_app
from broker.summary import Confirmer
from broker.workspaces import add_workspace
from tests.helpers import ScriptedConfirmer
from tests.servers.services import mcp_app_command
from tests.unit.kinds.mcp_setup import add_stdio

BOARD = "ui://helm-test/board"


async def app_home(broker: Broker, tmp: Path, *options: str) -> None:
    """Workspace ``ws``; MCP servers ``board`` (the app server) and ``other`` (another server)."""
    root = tmp / "root"
    root.mkdir(parents=True, exist_ok=True)
    add_workspace(broker.home, "ws", root)
    add_stdio(broker, "board", mcp_app_command(*options))
    add_stdio(broker, "other", mcp_app_command("--no-ui", "--name", "other"))


async def added(broker: Broker, *, allow: tuple[str, ...] = ()) -> str:
    """Review and add the board app to ``ws``; its extension id."""
    reviewed = await review.review(broker, "ws", "board", BOARD)
    await review.add(broker, reviewed, allow)
    return reviewed.ext_id


class FakeWindow:
    """The window around an app: collects what Helm sends, answers links as told."""

    def __init__(self, open_links: bool = False) -> None:
        self.sent: list[dict[str, Any]] = []
        self.arrived = asyncio.Event()
        self.open_links = open_links
        self.links: list[str] = []
        self.mode = "inline"

    def send(self, text: str) -> None:
        self.sent.append(json.loads(text))
        self.arrived.set()

    def context(self) -> dict[str, Any]:
        return {"theme": "light", "locale": "en-US", "displayMode": self.mode,
                "availableDisplayModes": ["inline", "fullscreen"]}  # fmt: skip

    async def open_link(self, url: str) -> bool:
        self.links.append(url)
        return self.open_links

    def set_display_mode(self, mode: str) -> str:
        if mode in ("inline", "fullscreen"):
            self.mode = mode
        return self.mode

    async def answer(self, rid: Any, within: float = 20.0) -> dict[str, Any]:
        async with asyncio.timeout(within):
            while True:
                for message in self.sent:
                    if message.get("id") == rid and "method" not in message:
                        return message
                self.arrived.clear()
                await self.arrived.wait()


class Harness:
    """An app session on a fake window, and a way to ask it one request."""

    def __init__(self, session: AppSession, window: FakeWindow) -> None:
        self.session, self.window = session, window
        self._ids = 0

    async def ask(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._ids += 1
        self.session.receive(
            json.dumps({"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params or {}})
        )
        return await self.window.answer(self._ids)

    async def call(self, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.ask("tools/call", {"name": tool, "arguments": args or {}})


async def harness(
    broker: Broker,
    ext_id: str,
    *,
    confirm: Confirmer | None = None,
    window: FakeWindow | None = None,
    instance: str = "i1",
) -> Harness:
    opened = await open_app(broker, "ws", ext_id)
    window = window or FakeWindow()
    session = AppSession(
        broker, CallContext("ws", ext_id, instance), opened.spec, window,
        confirm or ScriptedConfirmer(), {},
    )  # fmt: skip
    return Harness(session, window)
