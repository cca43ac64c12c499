"""Extension calls through the real web view, the real broker and the real write dialog."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

from broker import Broker
from broker.broker import MAX_CALL_BYTES
from broker.extensions import install, review_and_approve
from broker.kinds.http.profiles import SERVICES, ServiceProfile
from broker.workspaces import add_workspace
from tests.e2e.host.kit import PAGES, Dialogs, evaluate, wait_ready
from tests.helpers import new_broker
from ui.aio import emitted
from ui.dialogs.confirm import DialogConfirmer
from ui.qt import Qt

EXTENSION = "com.example.notes"


def notes_extension(folder: Path) -> Path:
    shutil.copytree(PAGES / "probe", folder)
    manifest = {
        "id": EXTENSION,
        "name": "Notes",
        "version": "1.0.0",
        "kind": "widget",
        "entry": "index.html",
        "permissions": {"write": True},
        "connections": [
            {
                "id": "notes",
                "kind": "files",
                "root": "workspace",
                "paths": ["notes/*.txt"],
                "operations": ["list", "read", "write"],
            }
        ],
    }
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


async def open_broker(tmp: Path) -> Broker:
    root = tmp / "workspace"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "todo.txt").write_text("milk\n", encoding="utf-8")
    broker = new_broker(tmp / "home")
    await broker.__aenter__()
    add_workspace(broker.home, "ws", root)
    install(broker.home, "ws", notes_extension(tmp / "ext"))
    await review_and_approve(broker, "ws", EXTENSION)
    return broker


def test_a_widget_lists_and_reads_workspace_files_through_the_bridge(
    run: Any, frames: Any, tmp_path: Path
) -> None:
    async def scenario() -> tuple[Any, Any]:
        broker = await open_broker(tmp_path)
        try:
            view = frames(tmp_path / "ext", broker, extension=EXTENSION)
            await wait_ready(view)
            listed = await evaluate(view, "probe.call('notes', 'list', {})")
            read = await evaluate(view, "probe.call('notes', 'read', {path: 'notes/todo.txt'})")
            return listed, read
        finally:
            await broker.aclose()

    listed, read = run(scenario())
    assert listed["ok"] is True
    assert listed["data"]["files"] == [{"path": "notes/todo.txt", "size": 5}]
    assert read["ok"] is True
    assert read["data"]["text"] == "milk\n"
    assert read["data"]["sha256"] == hashlib.sha256(b"milk\n").hexdigest()


def test_a_write_confirmed_in_the_dialog_changes_the_file_and_a_declined_one_does_not(
    run: Any, frames: Any, qtbot: Any, tmp_path: Path
) -> None:
    dialogs = Dialogs()
    todo = tmp_path / "workspace" / "notes" / "todo.txt"

    async def write_and_answer(view: Any, text: str, button: str) -> Any:
        sha = hashlib.sha256(todo.read_bytes()).hexdigest()
        args = json.dumps({"path": "notes/todo.txt", "text": text, "expected_sha256": sha})
        pending = asyncio.ensure_future(evaluate(view, f"probe.call('notes', 'write', {args})"))
        dialog = await asyncio.wait_for(dialogs.shown.get(), 20)
        assert dialog.isVisible()
        assert dialog.windowTitle() == "Confirm file change"
        assert dialog.cancel_button.hasFocus() or dialog.focusWidget() is dialog.cancel_button
        qtbot.mouseClick(getattr(dialog, button), Qt.MouseButton.LeftButton)
        return await pending

    async def scenario() -> tuple[Any, str, Any, str]:
        broker = await open_broker(tmp_path)
        try:
            confirm = DialogConfirmer(factory=dialogs)
            view = frames(tmp_path / "ext", broker, extension=EXTENSION, confirm=confirm)
            view.show()
            await wait_ready(view)
            confirmed = await write_and_answer(view, "milk\neggs\n", "accept_button")
            after_confirm = todo.read_text(encoding="utf-8")
            declined = await write_and_answer(view, "nothing\n", "cancel_button")
            return confirmed, after_confirm, declined, todo.read_text(encoding="utf-8")
        finally:
            await broker.aclose()

    confirmed, after_confirm, declined, after_decline = run(scenario(), timeout=60)
    assert confirmed["ok"] is True
    assert confirmed["data"]["sha256"] == hashlib.sha256(b"milk\neggs\n").hexdigest()
    assert after_confirm == "milk\neggs\n"
    assert declined["ok"] is False
    assert declined["error"]["code"] == "declined"
    assert after_decline == "milk\neggs\n"


def test_the_rate_limit_of_a_frame_survives_a_reload_of_its_page(
    run: Any, frames: Any, tmp_path: Path
) -> None:
    async def scenario() -> tuple[list[str], str, list[str]]:
        broker = await open_broker(tmp_path)
        try:
            view = frames(tmp_path / "ext", broker, extension=EXTENSION, instance="slot-1")
            await wait_ready(view)
            # Sequential, so the in-flight cap never counts: only the per-minute limit does.
            first = await evaluate(
                view,
                "(async () => { const codes = []; for (let i = 0; i < 60; i++) {"
                " const r = await probe.call('notes', 'list', {}); codes.push(r.ok ? 'ok' : r.error.code); }"
                " return codes; })()",
                timeout=60,
            )
            ready_again = emitted(view.ready, 20)
            view.reload()
            await ready_again
            after = await evaluate(view, "probe.call('notes', 'list', {}).then(r => r.error.code)")
            other = frames(tmp_path / "ext", broker, extension=EXTENSION, instance="slot-2")
            await wait_ready(other)
            fresh = await evaluate(
                other,
                "Promise.all([probe.call('notes', 'list', {}), probe.call('notes', 'list', {})])"
                ".then(rs => rs.map(r => r.ok ? 'ok' : r.error.code))",
            )
            return first, after, fresh
        finally:
            await broker.aclose()

    first, after, fresh = run(scenario(), timeout=90)
    assert first == ["ok"] * 60
    assert after == "rate_limited"
    assert fresh == ["ok", "ok"], "another frame of the same extension has its own limit"


class _Issues(BaseHTTPRequestHandler):
    seen_auth: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Issues.seen_auth.append(self.headers.get("Authorization", ""))
        body = json.dumps([{"title": "Sandbox holds", "path": self.path}]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: Any) -> None:
        return


def test_an_http_read_goes_out_with_helms_token_which_the_page_never_sees(
    run: Any, frames: Any, tmp_path: Path
) -> None:
    token = "tok-e2e-5a4b3c2d1e"
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Issues)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    folder = tmp_path / "ext"
    shutil.copytree(PAGES / "probe", folder)
    manifest = {
        "id": "com.example.issues",
        "name": "Issues",
        "version": "1.0.0",
        "kind": "widget",
        "entry": "index.html",
        "connections": [
            {
                "id": "api",
                "kind": "http",
                "service": "tracker",
                "calls": {
                    "issues": {
                        "method": "GET",
                        "path": "/repos/{repo}/issues",
                        "query": {"per_page": "{limit}"},
                    }
                },
            }
        ],
    }
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")

    async def scenario() -> tuple[Any, Any]:
        broker = new_broker(tmp_path / "home")
        await broker.__aenter__()
        try:
            root = tmp_path / "root"
            root.mkdir()
            add_workspace(broker.home, "ws", root)
            base = f"http://127.0.0.1:{server.server_address[1]}"
            SERVICES.store(broker.home, broker.credentials).save(
                ServiceProfile("tracker", base, "token", "Authorization", "bearer"), {"token": token}
            )
            install(broker.home, "ws", folder)
            await review_and_approve(broker, "ws", "com.example.issues")
            view = frames(folder, broker, extension="com.example.issues")
            await wait_ready(view)
            result = await evaluate(view, "probe.call('api', 'issues', {repo: 'helm', limit: 5})")
            page_text = await evaluate(
                view, "document.documentElement.outerHTML + JSON.stringify(localStorage)"
            )
            return result, page_text
        finally:
            await broker.aclose()

    try:
        result, page_text = run(scenario())
    finally:
        server.shutdown()
        server.server_close()
    assert result == {
        "ok": True,
        "status": 200,
        "data": [{"title": "Sandbox holds", "path": "/repos/helm/issues?per_page=5"}],
        "error": None,
    }
    assert _Issues.seen_auth == [f"Bearer {token}"]
    assert token not in json.dumps(result)
    assert token not in page_text


class _Measured:
    """The broker, with the longest arguments text it was handed recorded."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.longest = 0

    async def request_json(
        self, ctx: Any, connection: str, operation: str, args_json: str, confirm: Any
    ) -> str:
        self.longest = max(self.longest, len(args_json))
        return await self.broker.request_json(ctx, connection, operation, args_json, confirm)


def test_an_oversized_call_never_reaches_helm_whole_is_answered_too_large_and_counts(
    run: Any, frames: Any, tmp_path: Path
) -> None:
    async def scenario() -> tuple[str, int, list[str], str]:
        broker = await open_broker(tmp_path)
        try:
            handler = _Measured(broker)
            view = frames(tmp_path / "ext", handler, extension=EXTENSION, instance="big-1")
            await wait_ready(view)
            huge = await evaluate(
                view,
                "probe.call('notes', 'list', {text: 'x'.repeat(32 * 1024 * 1024)}).then(r => r.error.code)",
            )
            longest = handler.longest
            # The other 59 calls of the minute, each just over the limit; then any call waits.
            over = await evaluate(
                view,
                "(async () => { const codes = []; for (let i = 0; i < 59; i++) {"
                " const r = await probe.call('notes', 'list', {text: 'x'.repeat(256 * 1024)});"
                " codes.push(r.error.code); } return codes; })()",
                timeout=60,
            )
            after = await evaluate(
                view, "probe.call('notes', 'list', {}).then(r => r.ok ? 'ok' : r.error.code)"
            )
            return huge, longest, over, after
        finally:
            await broker.aclose()

    huge, longest, over, after = run(scenario(), timeout=120)
    assert huge == "too_large"
    assert longest == MAX_CALL_BYTES + 1, "Helm took in one character past its limit, no more"
    assert over == ["too_large"] * 59
    assert after == "rate_limited", "refused calls count against the rate limit"
