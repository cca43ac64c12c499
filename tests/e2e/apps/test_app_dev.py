"""``helm dev --server S --app URI``: review first, then the app with its traffic logged."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import new_broker
from tests.unit.apps.app_setup import BOARD, app_home
from ui.aio import emitted
from ui.apps.devwindow import AppDevWindow
from ui.apps.dialogs import AppReviewDialog

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
