"""Test kit for MCP Apps in the real web view: a broker with the SDK-built app server, an
``AppHost`` with Helm's real dialogs (no input guard, so a test click counts), and running
code inside the app's own frame."""

from __future__ import annotations

import asyncio
import itertools
import json
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from broker import Broker
from tests.e2e.host.kit import Dialogs
from tests.helpers import new_broker
from tests.unit.apps.app_setup import added, app_home
from ui.aio import emitted
from ui.apps.frame import AppFrame
from ui.apps.host import AppHost
from ui.apps.view import AppView
from ui.qt import QWebEngineScript

_tags = itertools.count(1)


class Links:
    """Stands in for the system browser: records what would have opened."""

    def __init__(self) -> None:
        self.opened: list[str] = []

    def __call__(self, url: str) -> None:
        self.opened.append(url)


@asynccontextmanager
async def app_broker(tmp: Path, *options: str, allow: tuple[str, ...] = ()) -> Any:
    broker: Broker = new_broker(tmp / "home")
    async with broker:
        await app_home(broker, tmp, *options)
        ext_id = await added(broker, allow=allow)
        yield broker, ext_id


def app_host(broker: Broker, dialogs: Dialogs, links: Links) -> AppHost:
    return AppHost(broker, dialogs=dialogs, open_url=links, guard_ms=0)


async def open_frame(host: AppHost, ext_id: str, instance: str = "i1", within: float = 30.0) -> AppView:
    """An app frame, shown, its app initialized with Helm."""
    frame = host.frame("ws", ext_id, instance)
    frame.resize(640, 480)
    frame.show()
    view = await _ready(frame, within)
    await asyncio.wait_for(view.session.started.wait(), within)
    return view


async def _ready(frame: AppFrame, within: float) -> AppView:
    ready = emitted(frame.ready, within)
    await asyncio.wait_for(frame.opening, within)
    if frame.view is None:
        ready.close()
        raise AssertionError(f"the app did not open: {frame.notice.text()}")
    (view,) = await ready
    return view


async def in_app(view: AppView, expression: str, within: float = 20.0) -> Any:
    """The JSON value of ``expression`` (a promise is awaited) run inside the app's frame."""
    tag = f"helm-app-evaluate-{next(_tags)}:"
    logged = emitted(view.page.console, within, lambda _level, message, *_: message.startswith(tag))
    script = (
        f"Promise.resolve().then(() => ({expression})).then("
        f"v => console.log({json.dumps(tag)} + JSON.stringify({{value: v === undefined ? null : v}})),"
        f"e => console.log({json.dumps(tag)} + JSON.stringify({{error: String(e && e.message || e)}})))"
    )
    frames = view.page.mainFrame().children()
    if not frames:
        logged.close()
        raise AssertionError("the host page has no app frame")
    frames[0].runJavaScript(script, QWebEngineScript.ScriptWorldId.MainWorld.value)
    _level, message, *_ = await logged
    return json.loads(message[len(tag) :])
