"""The main window's Agents tab: the Agents page, made the first time the tab is shown.

The page runs on ``broker.agents``, which imports the ACP SDK — half a second the window must
not wait for at start-up, and that a user who never opens the tab never pays. So the tab
starts empty; the first time it is shown, the page's modules are imported in a worker thread
(the tab says so meanwhile), then the agents' host is made by ``make_host`` (``app/`` owns
it) and the page put in place. ``aclose`` ends the page's turns, then the host and every agent
it started.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from ui.aio import OwnedTasks
from ui.dialogs.base import GUARD_MS
from ui.qt import QShowEvent, QVBoxLayout, QWidget, Signal
from ui.text import plain_label, set_plain

if TYPE_CHECKING:
    from broker.agents import AgentHost
    from broker.orchestrate.builds import Build, BuildPlan
    from ui.agents.page import AgentsPage

log = logging.getLogger("helm.agents")

PAGE_MODULE = "ui.agents.page"
LOAD_SECONDS = 60.0

HostFactory = Callable[[], "tuple[AgentHost, str]"]
"""Makes the agents' host; the text says what was wrong with its settings, or is empty."""


class AgentsTab(QWidget):
    loaded = Signal(object)
    """The Agents page is in place (the page)."""

    def __init__(
        self, make_host: HostFactory, parent: QWidget | None = None, *, guard_ms: int = GUARD_MS
    ) -> None:
        super().__init__(parent)
        self._make_host = make_host
        self._guard_ms = guard_ms
        self.page: AgentsPage | None = None
        self.host: AgentHost | None = None
        self._loading: asyncio.Task[None] | None = None
        self._tasks = OwnedTasks(self)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.notice = plain_label("Loading the Agents page…", self)
        self._layout.addWidget(self.notice)
        self._layout.addStretch(1)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.load()

    def load(self) -> asyncio.Task[None]:
        """Make the page (once); the task ends when it is in place or could not be made."""
        if self._loading is None:
            self._loading = self._tasks.start(self._load())
        return self._loading

    async def _load(self) -> None:
        try:
            await asyncio.wait_for(asyncio.to_thread(importlib.import_module, PAGE_MODULE), LOAD_SECONDS)
        except Exception as err:  # noqa: BLE001 - shown in the tab, not raised into the loop
            log.error("the Agents page could not be loaded: %s", type(err).__name__)
            set_plain(self.notice, f"The Agents page could not be loaded ({type(err).__name__}).")
            return
        from ui.agents.page import AgentsPage

        self.host, problem = self._make_host()
        self.page = AgentsPage(self.host, self, guard_ms=self._guard_ms)
        self.notice.hide()
        self._layout.insertWidget(0, self.page, 1)
        self._layout.setStretch(self._layout.count() - 1, 0)
        if problem:
            self.page.say(problem, error=True)
        self.loaded.emit(self.page)

    async def start(self, plan: BuildPlan, build: Build) -> None:
        """``BuildRunner``: run a tool's build here (the page is made first if need be)."""
        from broker.errors import AgentError

        await self.load()
        if self.page is None:
            raise AgentError("the Agents page could not be loaded")
        await self.page.start_build(plan, build)

    def follow_home(self) -> None:
        """The home changed on disk: the agents and workspaces to choose from, read again (not
        while a turn runs, whose choices stay as they were)."""
        if self.page is not None and not self.page.busy:
            self.page.reload()

    def follow_policy(self) -> None:
        """The organisation's policy changed: the agents it does not allow are stopped, and the
        write switch follows it."""
        if self.host is not None:
            self._tasks.start(self.host.stop_forbidden())
        if self.page is not None and not self.page.busy:
            self.page.reload()

    async def aclose(self) -> None:
        """Stop loading; end the page's turns; close the host and stop its agents."""
        if self._loading is not None and not self._loading.done():
            self._loading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([self._loading], timeout=LOAD_SECONDS)
        if self.page is not None:
            await self.page.aclose()
        if self.host is not None:
            await self.host.aclose()
