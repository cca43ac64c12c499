"""Who is asking: the one type of a requester, and the context a call carries.

Every request Helm serves comes from exactly one ``Requester``:

* ``ExtensionFrame`` — one running frame of an installed extension (a widget on the dashboard,
  a tool page, the CLI's ``helm call``);
* ``AppInstance`` — one open instance of an MCP App;
* ``AgentRequester`` — one session of a coding agent;
* ``HelmItself`` — Helm's own parts that act for the user (the DB explorer, a Settings Test).

The host derives the requester from the frame, channel, session or window a request arrives
on, never from anything the requester sends. It is carried by the call context, the write
target, the dialog's summary, the audit record and the activity record; nothing else says who
asks, and nothing poses as another requester (Helm's own parts are not extensions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class ExtensionFrame:
    """One frame of an installed extension; ``instance`` tells its frames apart."""

    workspace: str
    extension: str
    instance: str = "cli"
    name: str = ""
    """The name the extension's manifest gives (shown beside the id), when known."""

    @property
    def role(self) -> Literal["extension"]:
        return "extension"

    @property
    def id(self) -> str:
        return self.extension

    @property
    def label(self) -> str:
        return f"{self.name or self.extension} ({self.extension})"


@dataclass(frozen=True, slots=True)
class AppInstance:
    """One open instance of an MCP App (``app`` is its id in the workspace)."""

    workspace: str
    app: str
    instance: str
    name: str = ""

    @property
    def role(self) -> Literal["app"]:
        return "app"

    @property
    def id(self) -> str:
        return self.app

    @property
    def label(self) -> str:
        return f"App {self.name or self.app} ({self.app})"


AGENT_ID = "agent"
"""The id an agent session's records carry (the agent's own name is the ``connection``)."""


@dataclass(frozen=True, slots=True)
class AgentRequester:
    """One session of a coding agent (``agent``: its profile's name)."""

    workspace: str
    agent: str
    session: str = ""

    @property
    def role(self) -> Literal["agent"]:
        return "agent"

    @property
    def id(self) -> str:
        return AGENT_ID

    @property
    def instance(self) -> str:
        return self.session

    @property
    def label(self) -> str:
        return f"Agent {self.agent}"


@dataclass(frozen=True, slots=True)
class HelmItself:
    """A part of Helm acting for the user: ``part`` is its id (``helm.db-explorer``)."""

    part: str
    name: str
    workspace: str = ""

    @property
    def role(self) -> Literal["helm"]:
        return "helm"

    @property
    def id(self) -> str:
        return self.part

    @property
    def instance(self) -> str:
        return ""

    @property
    def label(self) -> str:
        return f"Helm's {self.name} ({self.part})"


Requester = ExtensionFrame | AppInstance | AgentRequester | HelmItself
"""Who asks. Every requester has ``role``, ``workspace``, ``id``, ``instance`` and ``label``
(what a dialog names it by: its name with its id beside it)."""


@dataclass(frozen=True, slots=True)
class CallContext:
    """Workspace, extension and extension instance of a call, and who asks.

    The host builds it from the frame and channel a call arrives on, never from anything the
    page sends. ``instance`` names one running frame of the extension (a widget on the
    dashboard, a tool page, the CLI); the rate limit is counted per instance. ``requester``
    is who asks when that is not the extension frame these three name (an MCP App instance).
    """

    workspace: str
    extension: str
    instance: str = "cli"
    requester: Requester | None = None

    @property
    def who(self) -> Requester:
        """The requester of this call."""
        if self.requester is not None:
            return self.requester
        return ExtensionFrame(self.workspace, self.extension, self.instance)

    @classmethod
    def of(cls, requester: Requester) -> CallContext:
        """The context of a call ``requester`` makes."""
        return cls(requester.workspace, requester.id, requester.instance, requester)
