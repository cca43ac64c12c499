"""The start-up check in Helm's own process: it passes here, a late preconnect revokes it, and no
file of an extension is served before it has passed (while the frame's renderer starts)."""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import ui.host.view as view_module
from tests.e2e.host.kit import EchoHandler, copy_page, evaluate, wait_ready
from tests.support import descendants
from ui.aio import emitted
from ui.host import ExtensionProfile, entry_url, extension_host
from ui.host.egress_check import ENGINE_CHECK, EngineCheck
from ui.host.page import HostPage
from ui.qt import QUrl


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
    assert view.bridge.closed, "the page can no longer reach Helm"
    assert view.refusal.isVisible()
    assert "QTWEBENGINE_CHROMIUM_FLAGS" in view.refusal.text()
    assert run(evaluate(view, "1 + 1")) == 2, "the page itself is left alone, only cut off"


def test_a_check_closed_in_its_late_window_closes_its_port_and_keeps_its_verdict(run: Any) -> None:
    check = EngineCheck()

    async def scenario() -> Any:
        first = await check.result()
        assert check.canary_port is not None
        with socket.socket() as other, pytest.raises(OSError, match="in use"):  # the canary holds its port
            other.bind(("127.0.0.1", check.canary_port))
        await check.aclose()
        await check.aclose()  # closing again is harmless
        return first, await check.final()

    first, final = run(scenario())
    assert first.passed and final is first
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", check.canary_port), timeout=5).close()


def test_a_check_closed_before_its_verdict_does_not_pass(run: Any) -> None:
    check = EngineCheck()

    async def scenario() -> Any:
        check.start()
        await asyncio.sleep(0)
        await check.aclose()
        return await check.result()

    outcome = run(scenario())
    assert outcome.passed is False
    assert check.passed is False


class PageOnly:
    def __init__(self, page: HostPage) -> None:
        self.page = page


class ScriptedGate:
    """A verdict the test gives; ``asked`` is set once a file waits for it."""

    def __init__(self) -> None:
        self.verdict: bool | None = None
        self.asked = asyncio.Event()
        self._callbacks: list[Callable[[bool], None]] = []

    @property
    def passed(self) -> bool | None:
        if self.verdict is None:
            self.asked.set()
        return self.verdict

    def when_decided(self, callback: Callable[[bool], None]) -> None:
        self._callbacks.append(callback)

    def decide(self, passed: bool) -> None:
        self.verdict = passed
        for callback in self._callbacks:
            callback(passed)


def renderers() -> set[int]:
    """The engine's processes, its renderers among them (it forks each from a zygote it
    started): every process below this one."""
    return descendants(os.getpid())


async def renderers_started(since: set[int], within: float = 20) -> set[int]:
    async with asyncio.timeout(within):
        while not (started := renderers() - since):
            await asyncio.sleep(0.01)
    return started


def test_a_held_frame_starts_the_renderer_its_page_then_runs_in(run: Any, tmp_path: Path) -> None:
    """The verdict holds a frame's files, not its start: its renderer starts meanwhile, and the
    page runs in that one once served. A document that asked for a browsing context group of its
    own (``Cross-Origin-Opener-Policy``) would have the engine start a second renderer for it,
    after the wait: the start of every dashboard frame twice over."""
    folder = copy_page("probe", tmp_path / "ext")
    profile = ExtensionProfile(folder, extension_host("ws", "com.example.early"))
    gate = ScriptedGate()
    profile.handler.hold_until(gate)
    page = HostPage(profile.profile, profile.host)

    async def scenario() -> tuple[set[int], bool]:
        loaded = emitted(page.loadFinished, 20)
        before = renderers()
        page.load(QUrl(entry_url(profile.host, "index.html")))
        await asyncio.wait_for(gate.asked.wait(), 20)
        held = await renderers_started(before)
        gate.decide(True)
        (ok,) = await loaded
        return held, bool(ok)

    try:
        held, ok = run(scenario())
        assert ok
        assert page.renderProcessPid() in held, f"the page runs in {page.renderProcessPid()}, not in {held}"
    finally:
        page.deleteLater()
        profile.deleteLater()


@pytest.mark.parametrize("passed", [True, False], ids=["passed", "failed"])
def test_a_frames_files_wait_for_the_verdict_and_are_refused_after_a_failed_one(
    run: Any, tmp_path: Path, passed: bool
) -> None:
    folder = copy_page("probe", tmp_path / "ext")
    profile = ExtensionProfile(folder, extension_host("ws", "com.example.held"))
    gate = ScriptedGate()
    profile.handler.hold_until(gate)
    page = HostPage(profile.profile, profile.host)
    finished: list[bool] = []

    async def scenario() -> bool:
        page.loadFinished.connect(lambda ok: finished.append(ok))
        loaded = emitted(page.loadFinished, 20)
        page.load(QUrl(entry_url(profile.host, "index.html")))
        await asyncio.wait_for(gate.asked.wait(), 20)
        assert finished == [], "nothing loads while the verdict is out"
        gate.decide(passed)
        (ok,) = await loaded
        return bool(ok)

    try:
        assert run(scenario()) is passed
        if passed:
            assert run(evaluate(PageOnly(page), "document.getElementById('out').textContent")) == "probe"
    finally:
        page.deleteLater()
        profile.deleteLater()


def test_a_frame_started_while_the_check_runs_loads_only_after_it_passed(
    run: Any, frames: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    check = EngineCheck()
    monkeypatch.setattr(view_module, "ENGINE_CHECK", check)
    decided: list[float] = []
    check.when_decided(lambda passed: decided.append(time.monotonic()))
    view = frames(copy_page("probe", tmp_path / "ext"), EchoHandler())
    loaded: list[float] = []
    view.page.loadFinished.connect(lambda ok: loaded.append(time.monotonic()))
    run(wait_ready(view))
    assert check.passed is True
    assert len(decided) == 1 and loaded and loaded[0] > decided[0]
