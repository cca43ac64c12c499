"""Test kit for extension frames: folders, views, and evaluating page code."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

from broker.context import CallContext
from broker.summary import Confirmer, Decision, WriteSummary
from ui.aio import emitted
from ui.dialogs.confirm import ConfirmDialog
from ui.host import ExtensionProfile, ExtensionView, extension_host
from ui.host.bridge import CallHandler
from ui.host.evaluate import HasPage, PageScriptError
from ui.host.evaluate import evaluate as evaluate_in_page
from ui.host.files import Served, read_served
from ui.host.scheme import ExtensionSchemeHandler
from ui.qt import QBuffer, QByteArray, QIODevice

PAGES = Path(__file__).parent / "pages"


class EchoHandler:
    """A call handler that answers at once with its input (bridge mechanics, no broker)."""

    def __init__(self) -> None:
        self.seen: list[CallContext] = []

    async def request_json(
        self, ctx: CallContext, connection_id: str, operation: str, args_json: str, confirm: Confirmer
    ) -> str:
        self.seen.append(ctx)
        return (
            '{"ok":true,"data":{"connection":'
            + json.dumps(connection_id)
            + ',"operation":'
            + json.dumps(operation)
            + ',"args":'
            + args_json
            + '},"error":null}'
        )


class NoPolicyHandler(ExtensionSchemeHandler):
    """Serves like Helm's handler but without the page policy, to test the layers beneath it."""

    def requestStarted(self, job: Any) -> None:
        served = read_served(self._root, job.requestUrl().path())
        assert isinstance(served, Served)
        buffer = QBuffer(job)
        buffer.setData(QByteArray(served.data))
        buffer.open(QIODevice.OpenModeFlag.ReadOnly)
        job.reply(served.mime.encode(), buffer)


class RefuseConfirmer:
    async def __call__(self, summary: WriteSummary) -> Decision:
        return Decision.DECLINED


def copy_page(name: str, dest: Path) -> Path:
    shutil.copytree(PAGES / name, dest, dirs_exist_ok=True)
    return dest


def make_view(
    folder: Path,
    handler: CallHandler,
    *,
    workspace: str = "ws",
    extension: str = "com.example.test",
    instance: str = "frame-1",
    entry: str = "index.html",
    confirm: Confirmer | None = None,
    profile: ExtensionProfile | None = None,
) -> ExtensionView:
    profile = profile or ExtensionProfile(folder, extension_host(workspace, extension))
    view = ExtensionView(
        profile, entry, CallContext(workspace, extension, instance), handler, confirm or RefuseConfirmer()
    )
    view._test_profile = profile  # type: ignore[attr-defined]  # keep the profile alive with the view
    view.resize(640, 480)
    return view


async def wait_ready(view: ExtensionView, timeout: float = 20.0, fragment: str = "") -> None:
    ready = emitted(view.ready, timeout)
    view.load(fragment)
    await ready


async def evaluate(view: HasPage, expression: str, timeout: float = 20.0) -> Any:
    """Await the JSON value of ``expression`` (a promise is awaited) in the page's world."""
    try:
        return await evaluate_in_page(view, expression, timeout)
    except PageScriptError as err:
        raise AssertionError(f"page code failed: {err}") from err


class Dialogs:
    """Helm's real confirmation dialog, made without the input guard so a test click counts;
    each one shown is put on ``shown`` for the test to answer."""

    def __init__(self) -> None:
        self.shown: asyncio.Queue[ConfirmDialog] = asyncio.Queue()

    def __call__(self, summary: Any, parent: Any, *, remaining: float | None) -> ConfirmDialog:
        dialog = ConfirmDialog(summary, parent, remaining=remaining, guard_ms=0)
        self.shown.put_nowait(dialog)
        return dialog
