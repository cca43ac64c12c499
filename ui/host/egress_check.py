"""The check every frame waits for: a page's preconnect must reach nothing.

``<link rel=preconnect>`` is opened by the engine's network service on its own: neither the
page policy nor the request interceptor sees it, only the engine's switches (``egress``) stop
it. Those switches are process-wide and can be undone from outside Helm (a proxy setting the
engine obeys after all, a switch Helm does not know). So before the first frame loads, Helm
loads a page of its own that preconnects to a canary on 127.0.0.1 and listens. If the canary
hears anything, no frame of this process ever loads: each shows why instead.

The check runs once per process because the engine's network configuration is per process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ui.aio import OwnedTasks, emitted
from ui.host.page import HostPage
from ui.host.policy import SCHEME, entry_url
from ui.host.profile import ExtensionProfile
from ui.host.scheme import reply
from ui.qt import QObject, QUrl, QWebEngineUrlRequestJob, QWebEngineUrlSchemeHandler

log = logging.getLogger(__name__)

PROBE_HOST = "start-up-check"
"""The probe's origin: not hexadecimal, so no extension's host can be the same."""

LOAD_TIMEOUT = 30.0
SETTLE_SECONDS = 0.2
"""How long after the probe page loaded frames wait for the canary. A preconnect the engine
lets through is opened while the page is parsed, most often before it finishes loading (and
one that comes later still fails the check: see ``LATE_SECONDS``)."""
LATE_SECONDS = 15.0
"""How long the canary keeps listening after the check passed, for a late preconnect."""

REFUSAL = (
    "Helm is not running extensions: at start-up a test page reached the network ({heard}), so "
    "an extension could too. Start Helm without proxy or network switches in "
    "QTWEBENGINE_CHROMIUM_FLAGS and without a proxy set inside Helm's process."
)


@dataclass(frozen=True, slots=True)
class EgressCheck:
    passed: bool
    heard: tuple[str, ...]
    """What reached the canary (empty when the check passed)."""

    @property
    def message(self) -> str:
        if self.passed:
            return "a test page's preconnect reached nothing"
        return REFUSAL.format(heard=", ".join(self.heard) or "the test page did not load")


class _Canary:
    """TCP and UDP on one loopback port; tells the loop the moment anything arrives."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.heard: list[str] = []
        self.arrived = asyncio.Event()
        self._stop = threading.Event()
        self._tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._tcp.bind(("127.0.0.1", 0))
        self.port: int = self._tcp.getsockname()[1]
        self._udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._udp.bind(("127.0.0.1", self.port))
        self._tcp.listen(8)
        self._threads = [
            threading.Thread(target=self._listen, args=(self._tcp, "a TCP connection"), daemon=True),
            threading.Thread(target=self._listen, args=(self._udp, "a UDP datagram"), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _listen(self, sock: socket.socket, what: str) -> None:
        sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                if sock.type == socket.SOCK_STREAM:
                    conn, _ = sock.accept()
                    conn.close()
                else:
                    sock.recvfrom(512)
            except TimeoutError:
                continue
            except OSError:
                return
            self._loop.call_soon_threadsafe(self._heard, what)

    def _heard(self, what: str) -> None:
        self.heard.append(what)
        self.arrived.set()

    def close(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=1.0)
        self._tcp.close()
        self._udp.close()


def probe_page(port: int) -> str:
    target = f"127.0.0.1:{port}"
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Helm start-up check</title>"
        f"<link rel='preconnect' href='http://{target}/'>"
        f"<link rel='preconnect' href='https://{target}/'>"
        f"<link rel='dns-prefetch' href='http://{target}/'>"
        "</head><body></body></html>"
    )


class _ProbeHandler(QWebEngineUrlSchemeHandler):
    """Serves the probe page from memory, with the headers of every extension file."""

    def __init__(self, page: str, parent: QObject) -> None:
        super().__init__(parent)
        self._page = page.encode()

    def requestStarted(self, job: QWebEngineUrlRequestJob) -> None:
        reply(job, self._page, "text/html; charset=utf-8")


async def check_egress(canary: _Canary) -> EgressCheck:
    """Load the probe page and listen a moment; needs the QApplication and a running loop."""
    loaded = await _load_probe(probe_page(canary.port))
    if loaded and not canary.heard:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(canary.arrived.wait(), SETTLE_SECONDS)
    if not loaded and not canary.heard:
        return EgressCheck(False, ())
    return _verdict(canary)


def _verdict(canary: _Canary) -> EgressCheck:
    return EgressCheck(not canary.heard, tuple(dict.fromkeys(canary.heard)))


async def _load_probe(html: str) -> bool:
    """Load ``html`` in a frame made like every extension's: same profile settings and filters."""
    profile = ExtensionProfile(Path(), PROBE_HOST)
    profile.profile.removeUrlScheme(SCHEME.encode())
    handler = _ProbeHandler(html, profile)
    profile.profile.installUrlSchemeHandler(SCHEME.encode(), handler)
    page = HostPage(profile.profile, PROBE_HOST)
    finished = emitted(page.loadFinished, LOAD_TIMEOUT)
    try:
        page.load(QUrl(entry_url(PROBE_HOST, "index.html")))
        (ok,) = await finished
        return bool(ok)
    except TimeoutError:
        return False
    finally:
        page.deleteLater()
        profile.deleteLater()


class EngineCheck:
    """The process's one check; frames await ``result()``, the first caller starts it.

    A passed check keeps its canary open for ``LATE_SECONDS``: a preconnect the engine let
    through but opened late (a loaded machine) still fails the check then, and every frame
    watching is stopped.
    """

    def __init__(self) -> None:
        self._tasks = OwnedTasks(None)  # the process's one check: it runs as long as Helm does
        self._task: asyncio.Task[None] | None = None
        self._first = asyncio.Event()
        self._final = asyncio.Event()
        self._watchers: weakref.WeakSet[Any] = weakref.WeakSet()
        self._deciding: list[Callable[[bool], None]] = []
        self.outcome: EgressCheck | None = None
        self.canary_port: int | None = None
        """Where the probe's preconnect goes (for tests that play a late one)."""

    @property
    def passed(self) -> bool | None:
        """The first verdict, None before it."""
        return None if self.outcome is None else self.outcome.passed

    def when_decided(self, callback: Callable[[bool], None]) -> None:
        """Call ``callback(passed)`` with the first verdict (at once if there is one)."""
        if self.outcome is not None:
            callback(self.outcome.passed)
        else:
            self._deciding.append(callback)

    def start(self) -> None:
        """Begin the check now, if a loop runs (the host starts it early so frames wait less)."""
        if self._task is None:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return
            self._task = self._tasks.start(self._run())

    async def result(self) -> EgressCheck:
        """The first verdict (after the probe page loaded and a moment passed)."""
        self.start()
        await self._first.wait()
        assert self.outcome is not None
        return self.outcome

    async def final(self) -> EgressCheck:
        """The verdict once the late window closed (or something arrived in it)."""
        self.start()
        await self._final.wait()
        assert self.outcome is not None
        return self.outcome

    async def aclose(self) -> None:
        """Stop the check, its late window too (Helm is quitting): its canary's port is closed
        now, not left to the interpreter's exit."""
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task})

    def watch(self, frame: Any) -> None:
        """Call ``frame.engine_check_failed(outcome)`` if a passed check fails late."""
        self._watchers.add(frame)

    def unwatch(self, frame: Any) -> None:
        self._watchers.discard(frame)

    async def _run(self) -> None:
        canary = _Canary(asyncio.get_running_loop())
        self.canary_port = canary.port
        try:
            self._settle(await check_egress(canary))
            if self.outcome is not None and self.outcome.passed:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(canary.arrived.wait(), LATE_SECONDS)
                if canary.heard:
                    self._settle(_verdict(canary))
                    for frame in list(self._watchers):
                        frame.engine_check_failed(self.outcome)
        finally:
            canary.close()
            if self.outcome is None:  # the check itself broke off: nothing was shown safe
                self._settle(EgressCheck(False, ()))
            self._first.set()
            self._final.set()

    def _settle(self, outcome: EgressCheck) -> None:
        self.outcome = outcome
        if outcome.passed:
            log.info("start-up check: %s", outcome.message)
        else:
            log.error("start-up check failed: %s", outcome.message)
        deciding, self._deciding = self._deciding, []
        for callback in deciding:
            callback(outcome.passed)
        self._first.set()


ENGINE_CHECK = EngineCheck()
"""One per process, like the engine's network configuration it checks."""
