"""Closing a frame, or cutting it off, while its page still runs: the page keeps its channel and
its view until Qt deletes it (the engine crashes on a page that lost its channel while a document
was about to use it), and the closed bridge takes nothing more from it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.host.kit import EchoHandler, copy_page, evaluate, make_view, wait_ready
from ui.aio import emitted
from ui.host import ExtensionView
from ui.host.egress_check import EgressCheck
from ui.qt import QWebEngineView

FAILED = EgressCheck(False, ("a TCP connection",))
LOADED = "new Promise(r => document.readyState === 'complete' ? r(2) : addEventListener('load', () => r(2)))"
ROUNDS = 6
"""Frames closed or cut off one after another while they reload: each is a chance for a document
of the reload to send its first message."""


@pytest.fixture
def closing(tmp_path: Path) -> Iterator[Any]:
    """Frames the test closes itself; their profiles go once the test ends."""
    folder = copy_page("probe", tmp_path / "ext")
    made: list[ExtensionView] = []

    def factory(n: int) -> ExtensionView:
        view = make_view(folder, EchoHandler(), instance=f"frame-{n}")
        view.show()
        made.append(view)
        return view

    yield factory
    for view in made:
        view._test_profile.deleteLater()  # type: ignore[attr-defined]


def test_a_closed_frames_page_keeps_its_channel_and_view_until_qt_deletes_it(run: Any, closing: Any) -> None:
    view = closing(0)
    web, page, channel = view.web, view.page, view.channel

    async def close_while_reloading() -> tuple[bool, bool]:
        await wait_ready(view)
        gone = emitted(page.destroyed, 10.0)
        view.reload()
        await view.aclose()
        kept = (page.webChannel() is channel, QWebEngineView.forPage(page) is web)
        await gone
        return kept

    assert run(close_while_reloading()) == (True, True)


def test_frames_closed_while_their_pages_reload_leave_helm_running(run: Any, closing: Any) -> None:
    async def close_while_reloading(view: ExtensionView) -> None:
        await wait_ready(view)
        gone = emitted(view.page.destroyed, 10.0)
        view.reload()
        await view.aclose()
        await gone

    for n in range(ROUNDS):
        run(close_while_reloading(closing(n)))


def test_frames_cut_off_while_their_pages_reload_run_on_and_take_no_more_calls(
    run: Any, frames: Any, tmp_path: Path
) -> None:
    folder = copy_page("probe", tmp_path / "ext")
    handler = EchoHandler()

    async def cut_off_while_reloading(view: ExtensionView) -> Any:
        await wait_ready(view)
        view.reload()
        view.engine_check_failed(FAILED)
        # The reload stopped, or its document loaded: either way the page runs on, cut off.
        return await evaluate(view, LOADED)

    for n in range(ROUNDS):
        view = frames(folder, handler, instance=f"frame-{n}")
        view.show()
        assert run(cut_off_while_reloading(view)) == 2
        assert view.refusal.isVisible()
    seen = len(handler.seen)
    view.bridge.call("late", "files", "list", "{}")  # what the page's channel would deliver now
    assert len(handler.seen) == seen
    assert view.bridge.in_flight == 0


def test_a_cut_off_page_gets_no_answer_from_helm(run: Any, frames: Any, tmp_path: Path) -> None:
    handler = EchoHandler()
    view = frames(copy_page("probe", tmp_path / "ext"), handler)
    run(wait_ready(view))
    view.engine_check_failed(FAILED)

    async def answered_within(seconds: float) -> bool:
        call = asyncio.ensure_future(evaluate(view, "probe.call('files', 'list', {})"))
        done, _ = await asyncio.wait([call], timeout=seconds)
        call.cancel()
        return bool(done)

    assert not run(answered_within(1.0))
    assert handler.seen == []
