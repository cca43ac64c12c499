"""What the Start build dialog asks, the user's answer, and the builds started.

A build is planned (``BuildPlan``: who asks, which agent, where, the exact prompt), put to the
user (``BuildQuestion``, answered by Helm's Start build dialog, a fake in tests) and, on Start,
handed to a ``BuildRunner``, which runs it as an agent session where the user watches agents
(the Agents tab). Each started build is a ``Build``: the extension that started it asks its
state by its id, and never sees a word of the transcript.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from broker.context import ExtensionFrame
from broker.jsonutil import digest
from broker.summary import WriteSummary

RUNNING = "running"
WAITING = "waiting"
"""A question of the agent's is open with the user (a permission, a file write)."""
ENDED = "ended"
FAILED = "failed"
CANCELLED = "cancelled"
STATES = (RUNNING, WAITING, ENDED, FAILED, CANCELLED)

MAX_LABEL_CHARS = 40
"""The longest label a tool gives its write's button."""
DEFAULT_LABEL = "Write"
HELM_WORDS = ("cancel", "close")
"""Helm's own buttons' words, which a tool's label may not be: a write labelled "Cancel" or
"Start build" would be clicked by a user who meant Helm's button of that name."""


def label_problem(label: object) -> str | None:
    """Why ``label`` cannot name a tool's write on the dialog's button (None: it can); the
    label shown is ``" ".join(label.split())``."""
    if not isinstance(label, str) or not label.strip() or len(label) > MAX_LABEL_CHARS:
        return f"orWrite.label must be a short text (up to {MAX_LABEL_CHARS})"
    words = " ".join(label.split()).casefold()
    if words in HELM_WORDS or "start build" in words:
        return f'orWrite.label {words!r} is one of Helm\'s own answers: name the write ("Move")'
    return None


class BuildAnswer(StrEnum):
    """The user's answer to the Start build dialog (Cancel is the default)."""

    CANCEL = "cancel"
    BUILD = "build"
    """Start the build (a write offered beside it is not made)."""
    WRITE = "write"
    """Make the offered write alone."""
    BOTH = "both"
    """Make the write, then start the build if the write succeeded."""
    EXPIRED = "expired"
    """The write's confirmation ran out with the dialog open."""

    @property
    def writes(self) -> bool:
        return self in (BuildAnswer.WRITE, BuildAnswer.BOTH)

    @property
    def builds(self) -> bool:
        return self in (BuildAnswer.BUILD, BuildAnswer.BOTH)


@dataclass(frozen=True)
class BuildPlan:
    """One build as the user sees it before Start: every field comes from the approved manifest,
    the workspace's settings and the tool's input (show them as plain text)."""

    requester: ExtensionFrame
    agent: str
    project: str | None
    """The project it runs in; None: the workspace root."""
    folder: Path
    prompt: str
    write: bool

    @property
    def workspace(self) -> str:
        return self.requester.workspace

    @property
    def where(self) -> str:
        if self.project is None:
            return f"workspace {self.workspace} (its root)"
        return f"project {self.project} of workspace {self.workspace}"

    def fields(self) -> tuple[tuple[str, str], ...]:
        """(label, value) as the dialog and the terminal show them; the prompt is apart."""
        return (
            ("Extension", self.requester.label),
            ("Agent", self.agent),
            ("Runs in", self.where),
            ("Folder", str(self.folder)),
            ("Agent may change files", "yes — each change is confirmed" if self.write else "no"),
        )

    @property
    def digest(self) -> str:
        """Names the exact build in the audit log (the prompt itself is not logged)."""
        return digest(
            {
                "agent": self.agent,
                "workspace": self.workspace,
                "project": self.project,
                "prompt": self.prompt,
                "write": self.write,
            }
        )


@dataclass(frozen=True)
class BuildQuestion:
    """What the Start build dialog shows: the build, and the write offered beside it (its own
    confirmation: ``write`` carries its one-time token) with the tool's label for it."""

    plan: BuildPlan
    write: WriteSummary | None = None
    label: str = DEFAULT_LABEL

    @property
    def both_label(self) -> str:
        """The answer that makes the write, then starts the build ("Move and start build")."""
        return f"{self.label} and start build"

    def answers(self) -> tuple[BuildAnswer, ...]:
        """The answers offered, Cancel first (the default)."""
        if self.write is None:
            return (BuildAnswer.CANCEL, BuildAnswer.BUILD)
        return (BuildAnswer.CANCEL, BuildAnswer.BUILD, BuildAnswer.WRITE, BuildAnswer.BOTH)


class BuildAsker(Protocol):
    """Puts one ``BuildQuestion`` to the user: Helm's dialog, a fake in tests."""

    async def __call__(self, question: BuildQuestion) -> BuildAnswer: ...


@dataclass
class Build:
    """One started build: who started it and how its session is doing (never what it said)."""

    workspace: str
    extension: str
    id: str = field(default_factory=lambda: "build-" + secrets.token_urlsafe(12))
    outcome: str | None = None
    """ended, failed or cancelled once the session's turn is over."""
    asking: int = 0
    """How many of the agent's questions are open with the user (``follow.watched``)."""

    @property
    def state(self) -> str:
        if self.outcome is not None:
            return self.outcome
        return WAITING if self.asking else RUNNING

    def ended(self, stop_reason: str) -> None:
        """The turn is over with ACP's stop reason."""
        if self.outcome is None:
            self.outcome = CANCELLED if stop_reason == "cancelled" else ENDED

    def failed(self) -> None:
        if self.outcome is None:
            self.outcome = FAILED


class BuildRunner(Protocol):
    """Runs a confirmed build as an agent session where the user watches it."""

    async def start(self, plan: BuildPlan, build: Build) -> None:
        """Start the session and its first turn on ``plan.prompt``; return once it runs (its
        progress goes to ``build``). Raises ``HelmError`` when it cannot start (nothing ran)."""
        ...


class Builds:
    """The builds started in this Helm, by id; each is asked about only by its extension."""

    MAX_KEPT = 256

    def __init__(self) -> None:
        self._builds: dict[str, Build] = {}

    def add(self, build: Build) -> None:
        self._builds[build.id] = build
        while len(self._builds) > self.MAX_KEPT:  # the oldest finished one goes first
            done = next((k for k, b in self._builds.items() if b.outcome is not None), None)
            if done is None:
                break
            del self._builds[done]

    def of(self, workspace: str, extension: str, build_id: str) -> Build | None:
        """The build ``build_id`` if this extension of this workspace started it."""
        build = self._builds.get(build_id)
        if build is None or (build.workspace, build.extension) != (workspace, extension):
            return None
        return build
