"""The desktop window at start-up: its frame painted first, then the window in it, painted, then
filled with the workspace's widgets."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from app.cli import desktop_args
from app.demo import EXTENSIONS, set_up_demo
from app.gui import after_frames
from app.gui import run as desktop
from app.gui import set_up_demo as set_up_demo_in
from app.window import FILL_WITHIN_MS, Window, open_window
from tests.helpers import new_broker
from ui.shell import WindowShell


def test_the_window_is_painted_before_it_reads_the_workspaces_and_makes_frames(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> tuple[Any, ...]:
        async with new_broker(tmp_path / "home") as broker:
            await set_up_demo(broker)
            window = open_window(broker)
            painted: asyncio.Future[tuple[Any, int]] = asyncio.get_running_loop().create_future()
            helm = window.window
            helm.painted.connect(
                lambda: painted.done() or painted.set_result((helm.workspace, len(helm.dashboard.cards)))
            )
            at_open = (helm.workspace, len(helm.dashboard.cards), helm.dashboard.empty.isVisible())
            try:
                at_paint = await asyncio.wait_for(painted, 20)
                ready = await window.wait_ready(len(EXTENSIONS), 30)
                return at_open, at_paint, ready, helm.workspace
            finally:
                await window.aclose()

    at_open, at_paint, ready, workspace = run(scenario(), timeout=60)
    assert at_open == (None, 0, False), "nothing read yet, and no 'no widgets' notice meanwhile"
    assert at_paint == (None, 0)
    assert ready and workspace == "demo"


def test_a_new_users_window_waits_for_the_demo_before_it_shows_or_reviews_anything(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> tuple[Any, ...]:
        async with new_broker(tmp_path / "home") as broker:
            window = open_window(broker, fill=False)
            helm = window.window
            painted = asyncio.Event()
            helm.painted.connect(painted.set)
            try:
                await asyncio.wait_for(painted.wait(), 20)
                # Past the moment a window fills itself when nothing holds it.
                await asyncio.sleep(FILL_WITHIN_MS / 1000 * 2)
                before = (helm.workspace, len(helm.dashboard.cards))
                await set_up_demo_in(window)
                ready = await window.wait_ready(len(EXTENSIONS), 30)
                reviews = [key for key in helm.windows if key.startswith("review:")]
                return before, ready, helm.workspace, reviews
            finally:
                await window.aclose()

    before, ready, workspace, reviews = run(scenario(), timeout=60)
    assert before == (None, 0)
    assert ready and workspace == "demo"
    assert reviews == [], "the demo comes approved: nothing to review"


def test_the_keychain_is_looked_up_once_every_frame_of_the_dashboard_is_ready(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> tuple[list[int], int]:
        async with new_broker(tmp_path / "home") as broker:
            await set_up_demo(broker)
            window = open_window(broker)
            filled = asyncio.Event()
            window.window.filled.connect(filled.set)
            started: list[int] = []
            try:
                await asyncio.wait_for(filled.wait(), 20)
                await after_frames(window, lambda: started.append(len(window.ready_frames)))
                return started, len(window.window.dashboard.cards)
            finally:
                await window.aclose()

    started, cards = run(scenario(), timeout=60)
    assert cards == len(EXTENSIONS)
    assert started == [cards], "started once, with every frame ready"


def test_the_desktop_paints_its_frame_first_and_opens_the_window_in_it(run: Any, tmp_path: Path) -> None:
    home = tmp_path / "home"

    async def set_up() -> None:
        async with new_broker(home) as broker:
            await set_up_demo(broker)

    run(set_up())
    seen: list[str] = []
    frames: list[WindowShell] = []

    def framed(shell: WindowShell) -> None:
        frames.append(shell)
        shell.painted.connect(lambda: seen.append("frame painted"))

    def opened(window: Window) -> None:
        seen.append("window opened")
        shell = frames[0]
        seen.append(f"in the frame: {window.window.window() is shell and window.window.parent() is shell}")
        window.window.closing.connect(lambda: seen.append("window closed"))
        window.window.filled.connect(lambda: asyncio.get_running_loop().call_soon(shell.close))

    args = desktop_args(["--home", str(home)])
    assert args is not None
    code = run(desktop(args, opened, framed), timeout=60)
    assert code == 0
    # Closing the frame closed the window in it, which ended the desktop.
    assert seen == ["frame painted", "window opened", "in the frame: True", "window closed"]


def test_a_frame_closed_before_the_window_came_ends_the_start_without_one(run: Any, tmp_path: Path) -> None:
    opened: list[Window] = []
    args = desktop_args(["--home", str(tmp_path / "home")])
    assert args is not None
    code = run(desktop(args, opened.append, lambda shell: shell.close()), timeout=60)
    assert code == 0
    assert opened == []
    assert not (tmp_path / "home" / "workspaces").exists(), "no demo set up for a window never opened"
