"""What the main window shows and does, without a widget: workspaces, extensions, their state.

``WorkspaceModel`` reads the Helm home through the broker and changes it through
``broker.extensions`` (install, review, approve, enable, disable, remove). Each row carries the
extension's ``broker.approval`` decision: whether it runs and what its review says.
``WidgetSettingsStore`` keeps the values of each widget's settings form in
``<home>/widget-settings.json`` — user preferences for a widget, not credentials, so they live
apart from ``settings.json`` — ``LayoutStore`` the dashboard's layout and open tool tabs
(``ui.layout_store``), and ``PreferencesStore`` Helm's own look (``ui.preferences``). Each row
also says whether the user stopped the extension or one of its connections (the kill switch,
``broker.killswitch``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from broker import approval, extensions
from broker.approval import ApprovalDecision, Standing
from broker.atomic import write_atomic
from broker.broker import Broker
from broker.errors import SettingsError
from broker.extensions import Reviewed
from broker.jsonutil import DuplicateKeyError, loads_strict
from broker.manifest import Manifest
from broker.settings import Workspace
from broker.workspaces import is_demo_workspace
from ui.layout_store import FILE_NAME as LAYOUT_FILE
from ui.layout_store import LayoutStore
from ui.preferences import PreferencesStore


class ExtensionState(StrEnum):
    APPROVED = "approved"
    NEEDS_APPROVAL = "needs approval"
    INVALID = "invalid manifest"
    FORBIDDEN = "stopped by policy"
    """The organisation's policy forbids it: it makes no call, approved or not."""


@dataclass(frozen=True)
class ExtensionRow:
    id: str
    name: str
    version: str
    kind: str
    enabled: bool
    decision: ApprovalDecision
    stopped: bool = False
    """The user stopped it (the kill switch): its calls are refused until they turn it on."""
    connections: tuple[tuple[str, str, bool], ...] = ()
    """Its connections: (id, kind, stopped by the user)."""

    @property
    def manifest(self) -> Manifest | None:
        return self.decision.manifest

    @property
    def state(self) -> ExtensionState:
        if self.decision.standing is Standing.INVALID:
            return ExtensionState.INVALID
        if self.decision.standing is Standing.FORBIDDEN:
            return ExtensionState.FORBIDDEN
        return ExtensionState.APPROVED if self.decision.approved else ExtensionState.NEEDS_APPROVAL

    @property
    def problem(self) -> str:
        return "" if self.decision.approved else self.decision.message

    @property
    def runnable(self) -> bool:
        return self.decision.allows_calls


class WidgetSettingsStore:
    """Per workspace and extension: the values of the widget's settings form.

    A file Helm cannot read is reported (``problem``) and left as it is: widgets start with
    their defaults, and no change is saved until the file is fixed or removed.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem: str | None = None
        """Why the file could not be read when it was last read (None: it could)."""

    def _load(self) -> dict[str, dict[str, Any]]:
        broken = (
            f"the widget settings file {self.path} cannot be read; Helm left it as it is and will "
            "not save widget settings until it is fixed or removed"
        )
        try:
            raw: Any = loads_strict(self.path.read_bytes())
        except FileNotFoundError:
            raw = {}
        except (OSError, ValueError, DuplicateKeyError, RecursionError) as exc:
            self.problem = broken
            raise SettingsError(broken) from exc
        if not _by_workspace_and_extension(raw):
            self.problem = broken
            raise SettingsError(broken)
        self.problem = None
        return dict(raw)

    def get(self, workspace: str, extension: str) -> dict[str, Any]:
        """The stored values (none when the file cannot be read: ``problem`` says why)."""
        try:
            return dict(self._load().get(workspace, {}).get(extension, {}))
        except SettingsError:
            return {}

    def set(self, workspace: str, extension: str, values: Mapping[str, Any]) -> None:
        """Store ``values``; SettingsError (nothing written) when the file cannot be read."""
        data = self._load()
        data.setdefault(workspace, {})[extension] = dict(values)
        self._write(data)

    def forget(self, workspace: str, extension: str) -> None:
        data = self._load()
        if data.get(workspace, {}).pop(extension, None) is not None:
            self._write(data)

    def _write(self, data: dict[str, dict[str, Any]]) -> None:
        text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
        write_atomic(self.path, text.encode("utf-8"), mode=0o600)


def _by_workspace_and_extension(raw: Any) -> bool:
    """Whether ``raw`` maps workspaces to extensions to each widget's values."""
    if not isinstance(raw, dict):
        return False
    return all(
        isinstance(exts, dict) and all(isinstance(v, dict) for v in exts.values()) for exts in raw.values()
    )


class WorkspaceModel:
    def __init__(self, broker: Broker, store: WidgetSettingsStore | None = None) -> None:
        self.broker = broker
        self.home = broker.home
        self.widget_settings = store or WidgetSettingsStore(self.home.path / "widget-settings.json")
        self.layouts = LayoutStore(self.home.path / LAYOUT_FILE)
        """The dashboard's layout and the open tool tabs, per workspace."""
        self.preferences = PreferencesStore.in_home(self.home.path)
        """Helm's look (appearance, text size) and whether Get started is shown."""

    def workspaces(self) -> list[str]:
        return sorted(self.home.settings().workspaces)

    def workspace(self, name: str) -> Workspace:
        return self.home.settings().workspace(name)

    def is_demo(self, name: str) -> bool:
        """Whether ``name`` is the demo Helm set up in its home (not a workspace of the user's)."""
        found = self.home.settings().workspaces.get(name)
        return found is not None and is_demo_workspace(self.home, found)

    def extensions(self, workspace: str) -> list[ExtensionRow]:
        ws = self.workspace(workspace)
        switch = self.broker.activity.switch
        rows = []
        for ext_id in sorted(ws.extensions):
            decision = approval.check(ws, ext_id, self.broker.load_manifest)
            m = decision.manifest
            name, version, kind = (m.name, m.version, m.kind) if m is not None else (ext_id, "?", "?")
            conns = tuple(
                (c.id, c.kind, switch.is_stopped(workspace, ext_id, c.id))
                for c in (m.connections if m is not None else [])
            )
            stopped = switch.is_stopped(workspace, ext_id)
            enabled = ws.extensions[ext_id].enabled
            rows.append(ExtensionRow(ext_id, name, version, kind, enabled, decision, stopped, conns))
        return rows

    def row(self, workspace: str, extension: str) -> ExtensionRow | None:
        return next((r for r in self.extensions(workspace) if r.id == extension), None)

    def needing_review(self, workspace: str) -> list[ExtensionRow]:
        """Enabled extensions whose approval is missing or stale."""
        return [r for r in self.extensions(workspace) if r.enabled and r.decision.needs_review]

    def install(self, workspace: str, folder: Path) -> Manifest:
        return extensions.install(self.home, workspace, folder)

    async def review(self, workspace: str, extension: str) -> Reviewed:
        """The snapshot plugin review shows (pinned MCP tools read now, and what changed)."""
        return await extensions.review(self.broker, workspace, extension)

    async def approve(self, reviewed: Reviewed) -> None:
        """Approve what ``reviewed`` showed; ``ApprovalChanged`` if it changed meanwhile."""
        await extensions.approve(self.broker, reviewed)

    def set_enabled(self, workspace: str, extension: str, enabled: bool) -> None:
        extensions.set_enabled(self.home, workspace, extension, enabled)

    def remove(self, workspace: str, extension: str) -> None:
        extensions.remove(self.home, workspace, extension)
        with contextlib.suppress(SettingsError):  # a damaged file is reported on its own
            self.widget_settings.forget(workspace, extension)
        with contextlib.suppress(SettingsError):
            self.layouts.forget(workspace, extension)

    # -- the kill switch ---------------------------------------------------------------------
    def stop(self, workspace: str, extension: str, connection: str | None = None) -> int:
        """Stop an extension (or one of its connections) now; how many running calls were cancelled."""
        return self.broker.activity.stop(workspace, extension, connection)

    def turn_on(self, workspace: str, extension: str, connection: str | None = None) -> None:
        self.broker.activity.resume(workspace, extension, connection)
