"""The start-up check in Helm's own process: it passes here, and a late preconnect revokes it."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from tests.e2e.host.kit import EchoHandler, copy_page, evaluate, wait_ready
from ui.host.egress_check import ENGINE_CHECK, EngineCheck


def test_frames_load_once_the_check_found_that_a_preconnect_reaches_nothing(
    run: Any, frames: Any, tmp_path: Path
) -> None:
    view = frames(copy_page("probe", tmp_path / "ext"), EchoHandler())
    run(wait_ready(view))
    assert ENGINE_CHECK.outcome is not None
    assert ENGINE_CHECK.outcome.passed, ENGINE_CHECK.outcome.message


def test_a_preconnect_that_arrives_late_fails_the_check_and_cuts_every_frame_off(
    run: Any, frames: Any, tmp_path: Path
) -> None:
    view = frames(copy_page("probe", tmp_path / "ext"), EchoHandler())
    view.show()
    run(wait_ready(view))
    check = EngineCheck()

    async def scenario() -> Any:
        first = await check.result()
        check.watch(view)
        assert check.canary_port is not None
        # What a preconnect the engine opened late would do.
        with socket.create_connection(("127.0.0.1", check.canary_port), timeout=5):
            pass
        return first, await check.final()

    first, final = run(scenario())
    assert first.passed
    assert not final.passed
    assert final.heard == ("a TCP connection",)
    assert view.page.webChannel() is None, "the page can no longer reach Helm"
    assert view.refusal.isVisible()
    assert "QTWEBENGINE_CHROMIUM_FLAGS" in view.refusal.text()
    assert run(evaluate(view, "1 + 1")) == 2, "the page itself is left alone, only cut off"
