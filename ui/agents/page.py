"""The main window's Agents page: run a coding agent on a workspace or project, and watch it.

Pick an agent, a workspace (or one of its projects) and whether this run may change files; type
a prompt; the transcript streams what the agent sends. The next prompt continues the same
session while the choices stay the same; changing them, New session, or Resume on a past
session starts another. Cancel ends the running turn (``AgentSession.cancel``: session/cancel,
then the agent's whole process group if it does not stop). Each question the agent puts —
a permission the policy leaves to the user, a file write — is Helm's own dialog, one at a time.

Everything runs on the session API of ``broker.agents`` (the host is built and closed in
``app/``); every turn is a task the page owns, and ``aclose`` ends it within the session's
limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from dataclasses import replace
from typing import Any, TypeVar

from broker.agents import AgentFailed, AgentHost, AgentSession, PastSession, SessionRequest, SessionStarted
from broker.errors import AgentError, HelmError
from broker.orchestrate.builds import Build, BuildPlan
from broker.orchestrate.follow import WatchedAsker, WatchedConfirmer, observe
from ui.agents.past import PastSessions
from ui.agents.picker import Picker
from ui.agents.questions import AgentQuestions
from ui.agents.story import Style
from ui.agents.transcript import Transcript
from ui.aio import OwnedTasks
from ui.dialogs.base import GUARD_MS
from ui.qt import (
    QHBoxLayout,
    QKeySequence,
    QPlainTextEdit,
    QPushButton,
    QShortcut,
    QShowEvent,
    QSplitter,
    Qt,
    QVBoxLayout,
    QWidget,
)
from ui.text import elide, plain_label, set_plain
from ui.theme import set_tone

log = logging.getLogger("helm.agents")

T = TypeVar("T")

NO_AGENTS = "No agents yet: add one in Helm → Settings — Agents…, or with helm agent add."


class AgentsPage(QWidget):
    def __init__(self, host: AgentHost, parent: QWidget | None = None, *, guard_ms: int = GUARD_MS) -> None:
        super().__init__(parent)
        self.host = host
        self.questions = AgentQuestions(self, guard_ms=guard_ms)
        self.session: AgentSession | None = None
        self.request: SessionRequest | None = None
        """What ``session`` was made for (its ``resume`` left out)."""
        self.resuming: PastSession | None = None
        self.turn: asyncio.Task[None] | None = None
        self._busy = False
        self.tasks = OwnedTasks(self)
        self._build()
        self.reload()
        self._set_busy(False)

    # -- building --------------------------------------------------------------------------
    def _build(self) -> None:
        col = QVBoxLayout(self)
        self.picker = Picker(self.host.home, self)
        self.picker.changed.connect(self._update_buttons)
        col.addWidget(self.picker)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        left = QWidget(split)
        left_col = QVBoxLayout(left)
        left_col.setContentsMargins(0, 0, 0, 0)
        self.transcript = Transcript(left)
        left_col.addWidget(self.transcript, 1)
        left_col.addLayout(self._prompt_row(left))
        self.past = PastSessions(self.host.home.path, split)
        self.past.resume.connect(self.resume)
        split.addWidget(left)
        split.addWidget(self.past)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setSizes([780, 320])
        col.addWidget(split, 1)
        self.status = plain_label("", self)
        col.addWidget(self.status)

    def _prompt_row(self, parent: QWidget) -> QHBoxLayout:
        row = QHBoxLayout()
        self.prompt = QPlainTextEdit(parent)
        self.prompt.setAccessibleName("Prompt")
        self.prompt.setPlaceholderText("What should the agent do? (Ctrl+Enter sends)")
        self.prompt.setMaximumHeight(90)
        self.prompt.textChanged.connect(self._update_buttons)
        self.send_shortcut = QShortcut(QKeySequence("Ctrl+Return"), self.prompt)
        self.send_shortcut.activated.connect(self.send)
        row.addWidget(self.prompt, 1)
        buttons = QVBoxLayout()
        self.send_button = QPushButton("Send", parent)
        self.send_button.clicked.connect(self.send)
        self.cancel_button = QPushButton("Cancel", parent)
        self.cancel_button.setToolTip("Stop the agent's turn now")
        self.cancel_button.clicked.connect(self.cancel)
        self.new_button = QPushButton("New session", parent)
        self.new_button.clicked.connect(self.new_session)
        for button in (self.send_button, self.cancel_button, self.new_button):
            buttons.addWidget(button)
        row.addLayout(buttons)
        return row

    # -- state -----------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """A turn is running (from Send until its last event was shown)."""
        return self._busy

    def reload(self) -> None:
        """Read the agents, workspaces and past sessions again."""
        problems = [p for p in (self.picker.reload(), self.past.reload()) if p]
        if not problems and self.picker.agent.count() == 0:
            problems.append(NO_AGENTS)
        self.say(" ".join(problems), error=bool(problems) and problems != [NO_AGENTS])
        self._update_buttons()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self.busy:
            self.reload()  # profiles and workspaces may have changed elsewhere

    def say(self, text: str, *, error: bool = False) -> None:
        set_plain(self.status, text)
        set_tone(self.status, "error" if error else None)

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.picker.setEnabled(not busy)
        self.past.setEnabled(not busy)
        self.past.update_button()
        self.cancel_button.setEnabled(busy)
        self._update_buttons()

    def _update_buttons(self) -> None:
        ready = self.picker.request() is not None and bool(self.prompt.toPlainText().strip())
        self.send_button.setEnabled(ready and not self.busy)
        self.new_button.setEnabled(not self.busy and (self.session is not None or self.resuming is not None))

    # -- actions ---------------------------------------------------------------------------
    def send(self) -> asyncio.Task[None] | None:
        """Run the prompt (in the current session when the choices did not change)."""
        text = self.prompt.toPlainText().strip()
        request = self.picker.request()
        if self.busy or not text or request is None:
            return None
        self.prompt.clear()
        self._set_busy(True)
        self.turn = self.own(self._turn(request, text))
        return self.turn

    def cancel(self) -> asyncio.Task[None] | None:
        if not self.busy or self.session is None:
            return None
        self.say("Cancelling the turn…")
        self.cancel_button.setEnabled(False)
        return self.own(self.session.cancel())

    def new_session(self) -> asyncio.Task[None] | None:
        """Forget the current session (its agent stays warm a while) and clear the transcript."""
        if self.busy:
            return None
        self.resuming = None
        self.transcript.reset()
        self.say("")
        task = self.own(self._drop_session())
        self._update_buttons()
        return task

    def resume(self, past: PastSession) -> asyncio.Task[None] | None:
        """Make the next prompt continue ``past``."""
        if self.busy:
            return None
        problem = self.picker.choose(past)
        if problem:
            self.say(problem, error=True)
            return None
        self.resuming = past
        self.transcript.reset()
        self.transcript.note(
            f"Your next prompt continues the session “{past.title}” of {past.agent} (session {past.id})."
        )
        self.say("")
        task = self.own(self._drop_session())
        self._update_buttons()
        return task

    async def start_build(self, plan: BuildPlan, build: Build) -> None:
        """Run a build a tool started (the user clicked Start in its dialog) as this page's
        session: its transcript here like any run; how it goes is reported to ``build``.
        Raises ``HelmError`` when it cannot start (a turn is running, the agent is gone)."""
        if self.busy:
            raise AgentError("the Agents tab is running another turn; start the build when it ends")
        projects = (plan.project,) if plan.project is not None else ()
        request = SessionRequest(plan.agent, plan.workspace, projects=projects, write=plan.write)
        await self._drop_session()
        session = self.host.session(
            request,
            asker=WatchedAsker(build, self.questions.permission),
            confirmer=WatchedConfirmer(build, self.questions.write),
        )
        self.session, self.request, self.resuming = session, request, None
        self.transcript.reset()
        self.transcript.note(f"Build started by {plan.requester.label} with {elide(plan.agent, 40)}")
        self._set_busy(True)
        self.turn = self.own(self._build_turn(session, plan, build))

    async def _build_turn(self, session: AgentSession, plan: BuildPlan, build: Build) -> None:
        self.say(f"{plan.agent} is building…")
        try:
            failed = await self._stream(session, plan.prompt, build)
        except HelmError as err:
            self.transcript.note(str(err), Style.FAILED)
            failed = True
        finally:
            if build.outcome is None:  # the turn ended without its last event (the page closed)
                build.failed()
            self._set_busy(False)
        self.say("")
        if failed:
            await self._drop_session()

    # -- a turn ----------------------------------------------------------------------------
    async def _turn(self, request: SessionRequest, text: str) -> None:
        try:
            await self._run(request, text)
        finally:
            self._set_busy(False)

    async def _run(self, request: SessionRequest, text: str) -> None:
        try:
            session = await self._session_for(request)
        except HelmError as err:  # a profile or workspace that is gone or wrong
            self.say(str(err), error=True)
            if not self.prompt.toPlainText():
                self.prompt.setPlainText(text)  # nothing ran: the prompt is not lost
            return
        self.say(f"{request.agent} is working…")
        try:
            failed = await self._stream(session, text)
        except HelmError as err:
            self.transcript.note(str(err), Style.FAILED)
            failed = True
        self.say("")
        if failed:  # the agent has stopped: the next prompt starts a new session
            await self._drop_session()

    async def _stream(self, session: AgentSession, text: str, build: Build | None = None) -> bool:
        """Show one turn's events; whether the agent failed.

        A session's first turn starts it, and a resumed session replays its history then: the
        prompt is shown once the session has started, after that history.
        """
        prompted = session.id is not None
        if prompted:
            self.transcript.prompt(text)
        failed = False
        # Closed however the loop ends, so the session ends its turn itself (and is awaited).
        async with contextlib.aclosing(session.run(text)) as events:
            async for event in events:
                if not prompted and isinstance(event, AgentFailed):
                    self.transcript.prompt(text)
                self.transcript.add(event)
                if build is not None:
                    observe(build, event)
                if not prompted and isinstance(event, SessionStarted):
                    self.transcript.prompt(text)
                    prompted = True
                    self.past.reload()
                failed = failed or isinstance(event, AgentFailed)
        return failed

    async def _session_for(self, request: SessionRequest) -> AgentSession:
        """The current session when it was made for ``request``; else a new one."""
        if self.resuming is not None:
            request = replace(request, resume=self.resuming.id)
        elif self.session is not None and self.request == request:
            return self.session
        await self._drop_session()
        session = self.host.session(request, asker=self.questions.permission, confirmer=self.questions.write)
        self.session, self.request, self.resuming = session, replace(request, resume=None), None
        if self.transcript.story.turn:
            self.transcript.note(f"New session: {elide(request.agent, 40)} in {elide(request.workspace, 40)}")
        return session

    async def _drop_session(self) -> None:
        session, self.session, self.request = self.session, None, None
        if session is not None:
            await session.close()

    # -- tasks -----------------------------------------------------------------------------
    def own(self, coro: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run ``coro`` as one of the page's tasks; a failure is also said on the page."""
        task = self.tasks.start(coro)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        error = None if task.cancelled() else task.exception()
        if error is not None:  # a bug (logged by the tasks): say so, by its type only
            self.say(f"Something went wrong: {type(error).__name__}", error=True)

    async def aclose(self) -> None:
        """End the running turn (politely, then the agent's group) and the session."""
        limits = self.host.limits
        bound = limits.cancel_grace + 2 * limits.term_grace + 5.0
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(bound):
                await self._drop_session()
        await self.tasks.wait(bound)  # the turn shows its last event, then ends
        await self.tasks.aclose(bound)
