"""``helm dev --server S --app URI``: review first, then the app with its traffic logged."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.apps.kit import in_app
from tests.helpers import new_broker
from tests.unit.apps.app_setup import BOARD, app_home
from ui.aio import emitted
from ui.apps.devwindow import MIN_LOG, AppDevWindow
from ui.apps.dialogs import AppReviewDialog
from ui.qt import QLineEdit, QSize

pytestmark = pytest.mark.usefixtures("mcp_app_server")


def test_author_mode_reviews_the_app_then_runs_it_and_logs_its_json_rpc(run: Any, tmp_path: Path) -> None:
    async def scenario() -> tuple[str, str]:
        async with new_broker(tmp_path / "home") as broker:
            await app_home(broker, tmp_path)
            window = AppDevWindow(broker, "ws", "board", BOARD, guard_ms=0)
            reviews: asyncio.Queue[AppReviewDialog] = asyncio.Queue()
            window.reviewing.connect(reviews.put_nowait)
            ready = emitted(window.apps.frameReady, 60)
            window.show()
            window.schedule_refresh()
            (await asyncio.wait_for(reviews.get(), 30)).accept_button.click()
            (view,) = await ready
            await asyncio.wait_for(view.session.started.wait(), 30)
            log = window.log.toPlainText()
            status = window.status.text()
            await window.aclose()
            window.deleteLater()
            return log, status

    log, status = run(scenario(), timeout=120)
    assert "needs review" in log
    assert "app → helm ui/initialize" in log and "helm → app answer" in log
    assert "app → helm ui/notifications/initialized" in log
    assert status.endswith("· running")


CONSOLE_PAGE = """<script>
const item = {id: 7, tags: ["a", "b"], owner: {name: "Sam"}};
item.self = item;
console.log("loaded", item, 42);
console.warn({big: "x".repeat(5000)});
</script>"""


def test_author_mode_gives_the_app_most_of_the_width_and_formats_its_console_as_a_browser(
    run: Any, tmp_path: Path
) -> None:
    extra = tmp_path / "extra.html"
    extra.write_text(CONSOLE_PAGE, encoding="utf-8")

    async def scenario() -> tuple[list[int], int, list[str]]:
        async with new_broker(tmp_path / "home") as broker:
            await app_home(broker, tmp_path, "--extra", str(extra))
            window = AppDevWindow(broker, "ws", "board", BOARD, guard_ms=0)
            reviews: asyncio.Queue[AppReviewDialog] = asyncio.Queue()
            window.reviewing.connect(reviews.put_nowait)
            window.resize(1200, 760)
            window.show()
            window.schedule_refresh()
            (await asyncio.wait_for(reviews.get(), 30)).accept_button.click()
            while window.log.toPlainText().count("console [") < 2:
                await asyncio.sleep(0.05)  # bounded by run()'s timeout
            sizes, width = window.split.sizes(), window.split.width()
            lines = [line for line in window.log.toPlainText().splitlines() if line.startswith("console")]
            await window.aclose()
            window.deleteLater()
            return sizes, width, lines

    sizes, width, lines = run(scenario(), timeout=120)
    assert sizes[0] > width / 2  # the app pane, not a sliver beside the log
    assert any(
        'loaded {"id":7,"tags":["a","b"],"owner":{"name":"Sam"},"self":"[Circular]"} 42' in line
        for line in lines
    )
    assert not any("[object Object]" in line for line in lines)
    warned = next(line for line in lines if line.startswith("console [warning]"))
    assert len(warned) < 2100  # bounded, as a browser's console folds a long value


def test_author_mode_shows_the_settings_a_tool_needs_and_runs_the_app_with_what_was_applied(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> tuple[str, Any, int, int]:
        async with new_broker(tmp_path / "home") as broker:
            await app_home(broker, tmp_path, "--needs-title")
            window = AppDevWindow(broker, "ws", "board", BOARD, guard_ms=0)
            reviews: asyncio.Queue[AppReviewDialog] = asyncio.Queue()
            window.reviewing.connect(reviews.put_nowait)
            window.resize(1200, 760)
            window.show()
            window.schedule_refresh()
            (await asyncio.wait_for(reviews.get(), 30)).accept_button.click()
            async with asyncio.timeout(30):
                while window.form is None:
                    await asyncio.sleep(0.05)
            frame = window.frame
            notice = frame.notice.text() if frame is not None else ""
            edit = window.form.inputs["title"]
            assert isinstance(edit, QLineEdit)
            edit.setText("Groceries")
            ready = emitted(window.apps.frameReady, 60)
            window.form.apply_button.click()
            (view,) = await ready
            await asyncio.wait_for(view.session.started.wait(), 30)
            async with asyncio.timeout(20):
                while len((opened := await in_app(view, "board.opened"))["value"]) < 2:
                    await asyncio.sleep(0.1)
            inner = (await in_app(view, "window.innerWidth"))["value"]
            width = window.split.width()
            await window.aclose()
            window.deleteLater()
            return notice, opened["value"], inner, width

    notice, opened, inner, width = run(scenario(), timeout=120)
    assert notice == "Board needs its settings first: title. Fill them in, then Apply."
    assert opened[0] == {"input": {"title": "Groceries"}}
    assert inner > width / 2, "the app itself gets most of the window's width, not a sliver"


def test_author_mode_follows_the_size_the_app_reports_within_the_screen_and_never_narrows_the_app(
    run: Any, tmp_path: Path
) -> None:
    async def reported(window: AppDevWindow, view: Any, width: int, height: int, seen: QSize) -> None:
        frame = window.frame
        assert frame is not None
        sized = emitted(frame.sizeReported, 20, lambda size: size == seen)
        await in_app(view, f"board.app.sendSizeChanged({{width: {width}, height: {height}}})")
        await sized

    async def scenario() -> tuple[list[int], list[int], tuple[int, int], list[int], tuple[int, int], Any]:
        async with new_broker(tmp_path / "home") as broker:
            await app_home(broker, tmp_path)
            window = AppDevWindow(broker, "ws", "board", BOARD, guard_ms=0)
            reviews: asyncio.Queue[AppReviewDialog] = asyncio.Queue()
            window.reviewing.connect(reviews.put_nowait)
            window.resize(700, 450)
            ready = emitted(window.apps.frameReady, 60)
            window.show()
            window.schedule_refresh()
            (await asyncio.wait_for(reviews.get(), 30)).accept_button.click()
            (view,) = await ready
            await asyncio.wait_for(view.session.started.wait(), 30)
            opened = window.split.sizes()
            await reported(window, view, 59, 40, QSize(59, 40))
            narrow = window.split.sizes()
            small = (window.width(), window.height())
            await reported(window, view, 50000, 50000, QSize(4096, 4096))  # bounded by the frame
            large = window.split.sizes()
            grown = (window.width(), window.height())
            room = window.screen().availableGeometry()
            await window.aclose()
            window.deleteLater()
            return opened, narrow, small, large, grown, room

    opened, narrow, small, large, grown, room = run(scenario(), timeout=120)
    assert opened[0] > opened[1], "the app's pane opens with most of the width"
    assert narrow == opened and small == (700, 450), "a narrow, short report changes nothing"
    assert grown == (max(room.width(), 700), max(room.height(), 450)), "the window grows to the screen"
    assert large[1] >= MIN_LOG and large[0] > opened[0], "the app's pane widens; the log keeps its least"
