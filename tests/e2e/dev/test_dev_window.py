"""``helm dev`` in the real web view: review, calls in the inspector, reload on save, live lint."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.scaffold import create
from broker import Broker
from broker.workspaces import add_workspace
from tests.e2e.dev.kit import Reviews, next_emission, start_and_approve
from tests.e2e.host.kit import Dialogs, evaluate
from tests.helpers import new_broker
from ui.dev import CallRecord, DevWindow
from ui.dialogs.confirm import DialogConfirmer
from ui.dialogs.review import ReviewDialog
from ui.qt import QApplication

EXTENSION = "com.example.notes"

# Resolves with the list's text once the page has put at least one file in it.
RENDERED_LIST = """new Promise(resolve => {
  const list = document.getElementById('files');
  const done = () => list.children.length > 0 && (resolve(list.textContent), true);
  if (!done()) new MutationObserver((_, seen) => { if (done()) seen.disconnect(); })
    .observe(list, {childList: true});
})"""


@pytest.fixture
def dev(run: Any, tmp_path: Path) -> Iterator[tuple[DevWindow, Reviews, Path]]:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "plan.md").write_text("# Plan\n", encoding="utf-8")
    folder = create(tmp_path / "ext", "widget", ext_id=EXTENSION, name="Notes").folder
    broker: Broker = new_broker(tmp_path / "home")
    run(broker.__aenter__())
    add_workspace(broker.home, "ws", root)
    reviews = Reviews()
    window = DevWindow(broker, "ws", folder, review_factory=reviews, debounce_ms=50)
    window.show()
    yield window, reviews, folder
    run(window.aclose())
    run(broker.aclose())
    window.deleteLater()


def test_the_page_is_reviewed_then_its_first_call_is_logged_with_its_envelope(
    run: Any, dev: tuple[DevWindow, Reviews, Path]
) -> None:
    window, reviews, _ = dev

    async def scenario() -> tuple[CallRecord, Any]:
        record = await start_and_approve(window, reviews)
        shown = await evaluate(window.view, RENDERED_LIST)  # type: ignore[arg-type]
        return record, shown

    record, shown = run(scenario())
    assert (record.instance, record.connection, record.operation, record.args) == ("dev", "notes", "list", {})
    assert record.ok
    assert record.error_code is None
    assert record.envelope["data"]["files"] == [{"path": "plan.md", "size": 7}]
    assert record.duration_ms >= 0
    assert "plan.md" in shown


def test_a_call_is_copied_to_the_clipboard_as_json(run: Any, dev: tuple[DevWindow, Reviews, Path]) -> None:
    window, reviews, _ = dev
    record = run(start_and_approve(window, reviews))

    window.inspector.select(0)
    window.inspector.copy_selected()

    copied = json.loads(QApplication.clipboard().text())
    assert copied == json.loads(json.dumps(record.as_json()))
    assert copied["connection"] == "notes"
    assert copied["errorCode"] is None
    assert copied["envelope"]["ok"] is True


def test_saving_a_file_reloads_the_page_and_its_calls_are_logged_again(
    run: Any, dev: tuple[DevWindow, Reviews, Path]
) -> None:
    window, reviews, folder = dev

    async def scenario() -> Any:
        await start_and_approve(window, reviews)
        loaded = asyncio.ensure_future(next_emission(window.pageLoaded))
        recorded = asyncio.ensure_future(next_emission(window.inspector.recorded))
        page = (folder / "index.html").read_text("utf-8")
        (folder / "index.html").write_text(page.replace("<h1>", '<h1 id="edited">'), encoding="utf-8")
        await loaded
        await recorded
        return await evaluate(window.view, "document.getElementById('edited') !== null")  # type: ignore[arg-type]

    assert run(scenario()) is True
    assert [r.operation for r in window.inspector.records] == ["list", "list"]


def test_a_broken_manifest_closes_the_page_and_lists_its_problems_until_fixed(
    run: Any, dev: tuple[DevWindow, Reviews, Path]
) -> None:
    window, reviews, folder = dev
    manifest = folder / "manifest.json"
    good = manifest.read_text("utf-8")

    async def break_it() -> None:
        await start_and_approve(window, reviews)
        raw = json.loads(good)
        raw["connections"][0]["paths"] = ["../secrets/*"]
        raw["kind"] = "gadget"
        refreshed = asyncio.ensure_future(next_emission(window.refreshed))
        manifest.write_text(json.dumps(raw), encoding="utf-8")
        await refreshed

    run(break_it())
    paths = [path for path, _ in window.lint.rows()]
    assert "$.kind" in paths
    assert "$.connections[0].paths[0]" in paths
    assert window.view is None

    async def fix_it() -> None:
        loaded = asyncio.ensure_future(next_emission(window.pageLoaded))
        manifest.write_text(good, encoding="utf-8")
        await loaded

    run(fix_it())
    assert window.lint.rows() == []
    assert window.view is not None


def test_a_manifest_saved_while_its_review_is_open_is_not_approved_but_reviewed_again(
    run: Any, dev: tuple[DevWindow, Reviews, Path]
) -> None:
    window, reviews, folder = dev
    raw = json.loads((folder / "manifest.json").read_text("utf-8"))
    raw["connections"][0]["paths"] = ["**"]

    async def scenario() -> tuple[ReviewDialog, ReviewDialog, Any]:
        refresh = asyncio.ensure_future(window.refresh())
        first = await asyncio.wait_for(reviews.shown.get(), 20.0)
        (folder / "manifest.json").write_text(json.dumps(raw), encoding="utf-8")
        first.accept_button.click()  # approves what it showed: the manifest before the save
        second = await asyncio.wait_for(reviews.shown.get(), 20.0)
        between = window.broker.home.settings().workspace("ws").extensions[EXTENSION].approval
        second.accept_button.click()
        await asyncio.wait_for(refresh, 20.0)
        return first, second, between

    first, second, between = run(scenario())
    approval = window.broker.home.settings().workspace("ws").extensions[EXTENSION].approval
    assert between is None
    assert [i.label for i in first.review.connections[0].reads] == ["files *.md", "files docs/**/*.md"]
    assert approval is not None and approval.digest == second.review.digest != first.review.digest


def test_a_write_from_the_page_waits_for_the_real_confirmation_dialog(run: Any, tmp_path: Path) -> None:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "plan.md").write_text("old\n", encoding="utf-8")
    folder = create(tmp_path / "ext", "tool", ext_id=EXTENSION, name="Notes").folder
    raw = json.loads((folder / "manifest.json").read_text("utf-8"))
    raw["permissions"] = {"write": True}
    raw["connections"][0]["operations"].append("write")
    (folder / "manifest.json").write_text(json.dumps(raw), encoding="utf-8")
    broker: Broker = new_broker(tmp_path / "home")
    run(broker.__aenter__())
    add_workspace(broker.home, "ws", root)
    reviews, confirms = Reviews(), Dialogs()
    window = DevWindow(
        broker, "ws", folder, review_factory=reviews, confirm=DialogConfirmer(factory=confirms)
    )
    window.show()
    sha = hashlib.sha256(b"old\n").hexdigest()
    write = f"helm.call('notes', 'write', {{path: 'plan.md', text: 'new\\n', expected_sha256: '{sha}'}})"

    async def scenario() -> Any:
        await start_and_approve(window, reviews)
        result = asyncio.ensure_future(evaluate(window.view, write))  # type: ignore[arg-type]
        dialog = await asyncio.wait_for(confirms.shown.get(), 20.0)
        assert (root / "plan.md").read_text("utf-8") == "old\n"  # nothing before Confirm
        dialog.accept_button.click()
        return await result

    try:
        envelope = run(scenario())
    finally:
        run(window.aclose())
        run(broker.aclose())
        window.deleteLater()
    assert envelope["ok"] is True
    assert (root / "plan.md").read_text("utf-8") == "new\n"
    assert [(r.operation, r.ok) for r in window.inspector.records][-1] == ("write", True)
