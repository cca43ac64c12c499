""" "Add app…": choosing a server's app, its review with resource domains to allow, the dashboard."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from broker.summary import Decision
from tests.helpers import new_broker
from tests.unit.apps.app_setup import BOARD, app_home
from ui.apps.add import AddAppWindow
from ui.apps.frame import AppFrame
from ui.apps.host import AppAwareFactory, AppHost
from ui.dashboard import FrameSpec
from ui.qt import QWidget

pytestmark = pytest.mark.usefixtures("mcp_app_server")


def test_add_app_reviews_the_chosen_app_and_adds_it_with_the_ticked_domain(run: Any, tmp_path: Path) -> None:
    async def scenario() -> tuple[list[str], str, Decision, Any, str, type, type]:
        async with new_broker(tmp_path / "home") as broker:
            await app_home(broker, tmp_path, "--resource", "https://cdn.example.com")
            window = AddAppWindow(broker, "ws", guard_ms=0)
            shown: asyncio.Queue[Any] = asyncio.Queue()
            window.reviewing.connect(shown.put_nowait)
            window.servers.setCurrentText("board")
            await window.find_apps()
            listed = [window.apps.item(i).text() for i in range(window.apps.count())]
            window.apps.setCurrentRow(0)
            reviewing = asyncio.ensure_future(window.review_selected())
            dialog = await asyncio.wait_for(shown.get(), 30)
            sha = dialog.findChild(QWidget, "sha256").text()
            dialog.allow["https://cdn.example.com"].setChecked(True)
            dialog.accept_button.click()
            decision = await reviewing
            manifest = broker.manifest("ws", next(iter(broker.home.settings().workspace("ws").extensions)))
            apps = AppHost(broker)
            factory = AppAwareFactory(lambda frame, parent: QWidget(parent), apps)
            made = factory(FrameSpec("ws", manifest, "x#dashboard"), QWidget())
            await apps.aclose()
            window.deleteLater()
            return listed, sha, decision, manifest.app, window.status.text(), type(made), AppFrame

    listed, sha, decision, app, status, made, frame_type = run(scenario(), timeout=90)
    assert listed == [f"Board — {BOARD}"]
    assert sha.startswith("HTML sha256: ") and app is not None and app.sha256 in sha
    assert decision is Decision.CONFIRMED
    assert app.allowed_resource_domains == ("https://cdn.example.com",)
    assert status == "Added Board."
    assert made is frame_type
