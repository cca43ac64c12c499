"""Author mode in the real web view: the main window's frames, approval asked once with what
changed, DevTools beside an unchanged sandbox, and recording then replaying a real server."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.scaffold import create
from broker import Broker
from broker.authoring.fixtures import FixtureBook
from broker.authoring.replay import REPLAY_NOTE, replay_kinds
from broker.credentials import FileStore
from broker.kinds import KINDS
from broker.workspaces import add_workspace
from tests.e2e.dev.kit import Reviews, next_emission, start_and_approve
from tests.e2e.host.kit import Dialogs, evaluate
from tests.helpers import new_broker
from tests.servers.services import JsonServer, _request
from ui.dev import DevOptions, DevWindow, TerminalReport
from ui.dialogs.confirm import DialogConfirmer
from ui.host.view import ExtensionView
from ui.qt import QLabel

EXTENSION = "com.example.notes"


class Session:
    """A dev window on a broker, closed with it; ``out`` holds its terminal lines."""

    def __init__(self, run: Any, broker: Broker, folder: Path, **options: Any) -> None:
        self.run, self.broker, self.out = run, broker, io.StringIO()
        self.reviews, self.confirms = Reviews(), Dialogs()
        run(broker.__aenter__())
        self.window = DevWindow(
            broker,
            "dev",
            folder,
            review_factory=self.reviews,
            confirm=DialogConfirmer(factory=self.confirms),
            debounce_ms=50,
            report=TerminalReport(self.out),
            options=DevOptions(**options),
        )
        self.window.show()

    def close(self) -> None:
        self.run(self.window.aclose())
        self.run(self.broker.aclose())
        self.window.deleteLater()


def dev_home(tmp: Path, folder: Path, name: str = "home") -> Broker:
    broker = new_broker(tmp / name)
    broker.home.ensure()
    add_workspace(broker.home, "dev", folder, author_mode=True)
    return broker


@pytest.fixture
def widget(run: Any, tmp_path: Path) -> Iterator[tuple[Session, Path]]:
    folder = create(tmp_path / "ext", "widget", ext_id=EXTENSION, name="Notes").folder
    (folder / "plan.md").write_text("# Plan\n", encoding="utf-8")
    raw = json.loads((folder / "manifest.json").read_text("utf-8"))
    raw["settings"] = {"greeting": {"type": "string", "default": "hello"}}
    (folder / "manifest.json").write_text(json.dumps(raw), encoding="utf-8")
    session = Session(run, dev_home(tmp_path, folder), folder)
    yield session, folder
    session.close()


def test_the_dev_page_is_a_frame_of_the_extension_host_with_the_widgets_settings(
    run: Any, widget: tuple[Session, Path]
) -> None:
    session, _ = widget
    window = session.window
    ready: list[ExtensionView] = []
    window.host.frameReady.connect(ready.append)
    run(start_and_approve(window, session.reviews))
    settings = run(evaluate(window.view, "new URLSearchParams(location.hash.slice(1)).get('settings')"))  # type: ignore[arg-type]
    assert ready == [window.view]
    assert json.loads(settings) == {"greeting": "hello"}


def save(folder: Path, change: Any) -> None:
    raw = json.loads((folder / "manifest.json").read_text("utf-8"))
    change(raw)
    (folder / "manifest.json").write_text(json.dumps(raw), encoding="utf-8")


def test_a_changed_manifest_is_asked_once_with_what_changed(run: Any, widget: tuple[Session, Path]) -> None:
    session, folder = widget
    window, reviews = session.window, session.reviews

    def may_write(raw: dict[str, Any]) -> None:
        raw["permissions"] = {"write": True}
        raw["connections"][0]["operations"].append("write")

    async def scenario() -> tuple[str, bool, str]:
        await start_and_approve(window, reviews)
        refreshed = asyncio.ensure_future(next_emission(window.refreshed))
        save(folder, may_write)
        dialog = await asyncio.wait_for(reviews.shown.get(), 20.0)
        shown = dialog.findChild(QLabel, "pin-changes").text()  # what changed, above the review
        dialog.cancel_button.click()
        await refreshed
        refreshed = asyncio.ensure_future(next_emission(window.refreshed))
        save(folder, lambda raw: raw.update(description="Notes, described anew"))  # not a reviewed part
        await refreshed
        asked_again = not reviews.shown.empty()
        refreshed = asyncio.ensure_future(next_emission(window.refreshed))
        save(folder, lambda raw: raw["connections"][0]["paths"].append("todo/*.md"))
        second = await asyncio.wait_for(reviews.shown.get(), 20.0)
        text = second.findChild(QLabel, "pin-changes").text()
        second.accept_button.click()
        await refreshed
        return shown, asked_again, text

    shown, asked_again, second = run(scenario())
    assert "may write: no → yes" in shown
    assert "[notes] + WRITE files *.md (replace existing files — confirmed each time)" in shown
    assert asked_again is False
    assert "[notes] + read files todo/*.md (list)" in second  # against the approval made earlier
    assert "may write: no → yes" in second
    lines = session.out.getvalue()
    assert f"review  not approved: every call of {EXTENSION} returns refused (Reload asks again)" in lines
    assert lines.count(f"{EXTENSION} needs approval: asked in the dev window") == 3
    assert window.broker.standing("dev", EXTENSION).allows_calls


FETCH = "fetch('http://127.0.0.1:9/').then(() => 'reached', () => 'blocked')"
EVAL = "(() => { try { return eval('1 + 1'); } catch (e) { return e.name; } })()"


def test_devtools_inspect_the_page_whose_sandbox_stays_as_it_was(run: Any, tmp_path: Path) -> None:
    folder = create(tmp_path / "ext", "tool", ext_id=EXTENSION, name="Notes").folder
    session = Session(run, dev_home(tmp_path, folder), folder, devtools=True)
    window = session.window
    assert window.devtools is not None

    async def scenario() -> tuple[Any, Any]:
        loaded = asyncio.ensure_future(next_emission(window.devtools.page.loadFinished))  # type: ignore[union-attr]
        await start_and_approve(window, session.reviews)
        await loaded
        fetched = await evaluate(
            window.view, "fetch('http://127.0.0.1:9/').then(() => 'reached', () => 'blocked')"
        )  # type: ignore[arg-type]
        evaluated = await evaluate(
            window.view, "(() => { try { return eval('1 + 1'); } catch (e) { return e.name; } })()"
        )  # type: ignore[arg-type]
        return fetched, evaluated

    try:
        fetched, evaluated = run(scenario())
        assert window.devtools.page.url().scheme() == "devtools"
        assert window.view is not None and window.view.page.devToolsPage() is window.devtools.page
    finally:
        session.close()
    assert fetched == "blocked"
    assert evaluated == "EvalError"


MANIFEST = {
    "id": "com.example.items",
    "name": "Items",
    "version": "1.0.0",
    "kind": "tool",
    "entry": "index.html",
    "permissions": {"write": True},
    "connections": [
        {"id": "api", "kind": "http", "service": "local", "calls": {
            "items": {"method": "GET", "path": "/items", "query": {"_limit": "{limit}"}},
            "rename": {"method": "PATCH", "path": "/items/{id}", "body": {"name": "{name}"}, "write": True},
        }},
    ],
}  # fmt: skip
PAGE = '<!doctype html><meta charset="utf-8"><script src="main.js" defer></script><p>items</p>'
SCRIPT = "window.items = helm.call('api', 'items', { limit: 2, user: 'me' });\n"
RENAME = "helm.call('api', 'rename', { id: 1, name: 'renamed' })"


def items_extension(tmp: Path) -> Path:
    folder = tmp / "items"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(MANIFEST), encoding="utf-8")
    (folder / "index.html").write_text(PAGE, encoding="utf-8")
    (folder / "main.js").write_text(SCRIPT, encoding="utf-8")
    return folder


async def read_then_write(session: Session) -> tuple[Any, Any, str]:
    """Approve, read what the page's first call got, then write with the dialog's Confirm."""
    await start_and_approve(session.window, session.reviews)
    items = await evaluate(session.window.view, "window.items")  # type: ignore[arg-type]
    result = asyncio.ensure_future(evaluate(session.window.view, RENAME))  # type: ignore[arg-type]
    dialog = await asyncio.wait_for(session.confirms.shown.get(), 20.0)
    request = dialog.summary.request
    dialog.accept_button.click()
    return items, await result, request


def test_calls_recorded_from_a_real_server_are_replayed_without_it_and_a_write_waits_for_confirm(
    run: Any, tmp_path: Path, json_server: JsonServer
) -> None:
    folder = items_extension(tmp_path)
    book = FixtureBook(tmp_path / "fixtures")
    recording = dev_home(tmp_path, folder)
    assert main(["service", "add", "local", "--base-url", json_server.url, "--no-token",
                 "--home", str(recording.home.path)]) == 0  # fmt: skip
    session = Session(run, recording, folder, record=book)
    try:
        recorded_items, recorded_write, _ = run(read_then_write(session))
        (first, *_) = session.window.inspector.records
    finally:
        session.close()
    assert _request(f"{json_server.url}/items/1")["name"] == "renamed"  # the real server was written
    assert first.hints == ("argument 'user' is not used by any placeholder of this call",)
    assert [(f.operation, f.args) for f in book.read("api")] == [
        ("items", {"limit": 2, "user": "me"}),
        ("rename", {"id": 1, "name": "renamed"}),
    ]

    json_server.reset()
    replay_home = tmp_path / "replay"
    replaying = Broker(
        replay_home, credentials=FileStore(replay_home / "c.json"), kinds=replay_kinds(book, tuple(KINDS))
    )
    replaying.home.ensure()
    add_workspace(replaying.home, "dev", folder, author_mode=True)
    session = Session(run, replaying, folder, replay=book)
    try:
        items, written, request = run(read_then_write(session))
    finally:
        session.close()
    assert (items, written) == (recorded_items, recorded_write)
    assert REPLAY_NOTE in request
    assert _request(f"{json_server.url}/items/1")["name"] == "anchor"  # replay reached no server
    assert "[api] http — replayed from" in session.out.getvalue()
