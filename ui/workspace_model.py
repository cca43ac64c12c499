"""What the main window shows and does, without a widget: workspaces, extensions, their state.

``WorkspaceModel`` reads the Helm home through the broker and changes it through
``broker.extensions`` (install, approve, enable, disable, remove). ``WidgetSettingsStore``
keeps the values of each widget's settings form in ``<home>/widget-settings.json`` — user
preferences for a widget, not credentials, so they live apart from ``settings.json``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from broker import extensions
from broker.atomic import write_atomic
from broker.broker import Broker
from broker.errors import ManifestError
from broker.manifest import Manifest
from broker.manifest import load as load_manifest
from broker.settings import Workspace


class ExtensionState(StrEnum):
    APPROVED = "approved"
    NEEDS_APPROVAL = "needs approval"
    INVALID = "invalid manifest"


@dataclass(frozen=True)
class ExtensionRow:
    id: str
    name: str
    version: str
    kind: str
    enabled: bool
    state: ExtensionState
    manifest: Manifest | None
    problem: str = ""

    @property
    def runnable(self) -> bool:
        return self.enabled and self.state is ExtensionState.APPROVED and self.manifest is not None


class WidgetSettingsStore:
    """Per workspace and extension: the values of the widget's settings form."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> dict[str, Any]:
        try:
            raw = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return {}  # a broken preferences file only loses preferences; settings are elsewhere
        return raw if isinstance(raw, dict) else {}

    def get(self, workspace: str, extension: str) -> dict[str, Any]:
        value = self._load().get(workspace, {}).get(extension, {})
        return dict(value) if isinstance(value, dict) else {}

    def set(self, workspace: str, extension: str, values: Mapping[str, Any]) -> None:
        data = self._load()
        data.setdefault(workspace, {})[extension] = dict(values)
        text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
        write_atomic(self.path, text.encode("utf-8"), mode=0o600)

    def forget(self, workspace: str, extension: str) -> None:
        data = self._load()
        if data.get(workspace, {}).pop(extension, None) is not None:
            write_atomic(self.path, json.dumps(data, indent=2).encode("utf-8"), mode=0o600)


class WorkspaceModel:
    def __init__(self, broker: Broker, store: WidgetSettingsStore | None = None) -> None:
        self.broker = broker
        self.home = broker.home
        self.widget_settings = store or WidgetSettingsStore(self.home.path / "widget-settings.json")

    def workspaces(self) -> list[str]:
        return sorted(self.home.settings().workspaces)

    def workspace(self, name: str) -> Workspace:
        return self.home.settings().workspace(name)

    def extensions(self, workspace: str) -> list[ExtensionRow]:
        ws = self.workspace(workspace)
        rows = []
        for ext in sorted(ws.extensions.values(), key=lambda e: e.id):
            try:
                manifest = load_manifest(ext.path)
            except ManifestError as exc:
                problem = f"{len(exc.issues)} problem(s) in manifest.json; run helm ext lint"
                rows.append(
                    ExtensionRow(ext.id, ext.id, "?", "?", ext.enabled, ExtensionState.INVALID, None, problem)
                )
                continue
            approved = ext.approval is not None and ext.approval.digest == manifest.digest()
            state = ExtensionState.APPROVED if approved else ExtensionState.NEEDS_APPROVAL
            rows.append(
                ExtensionRow(
                    ext.id, manifest.name, manifest.version, manifest.kind, ext.enabled, state, manifest
                )
            )
        return rows

    def row(self, workspace: str, extension: str) -> ExtensionRow | None:
        return next((r for r in self.extensions(workspace) if r.id == extension), None)

    def needing_review(self, workspace: str) -> list[ExtensionRow]:
        """Enabled extensions whose approval is missing or stale."""
        return [
            r for r in self.extensions(workspace) if r.enabled and r.state is ExtensionState.NEEDS_APPROVAL
        ]

    def install(self, workspace: str, folder: Path) -> Manifest:
        return extensions.install(self.home, workspace, folder)

    async def approve(self, workspace: str, extension: str) -> None:
        await extensions.approve(self.broker, workspace, extension)

    async def pin_changes(self, workspace: str, extension: str) -> list[str]:
        """What changed in pinned definitions (MCP tools) since the last approval."""
        return await extensions.pin_changes(self.broker, workspace, extension)

    def set_enabled(self, workspace: str, extension: str, enabled: bool) -> None:
        extensions.set_enabled(self.home, workspace, extension, enabled)

    def remove(self, workspace: str, extension: str) -> None:
        extensions.remove(self.home, workspace, extension)
        self.widget_settings.forget(workspace, extension)
