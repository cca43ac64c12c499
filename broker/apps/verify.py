"""Before an app opens: approved as it is now, or refused with what changed.

The approval (the extension's digest, which covers the pinned sha256, CSP and allowed domains)
must be current and the app enabled. Then the server is read again: a different HTML, a
different declared CSP or permissions, a tool that became or stopped being visible to the
app, a tool that now writes, or a tool definition that differs from its pin, each refuse the
app until the user reviews and approves it again. The HTML handed out is the server's, checked
against the pin — never anything else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from broker.approval import Standing
from broker.apps import launch, meta, spec
from broker.apps.errors import AppChanged, AppError
from broker.apps.spec import AppSpec
from broker.broker import Broker
from broker.manifest import Manifest
from broker.mcp import discovery
from broker.mcp import pins as tool_pins

CHANGED = "{name} changed since you approved it; review it again to open it ({n} change(s))"
AGAIN = "review it again (Review… in Helm's list of extensions) or add it again with `helm app add`"


@dataclass(frozen=True)
class OpenedApp:
    """An app checked and ready to run: its identity, what it may do, and its HTML."""

    workspace: str
    ext_id: str
    name: str
    spec: AppSpec
    html: bytes
    prefers_border: bool | None
    settings_form: Mapping[str, Any] = field(default_factory=dict)
    """The widget settings form of the opening tool's arguments (``spec.opener``)."""
    unset: tuple[launch.Unset, ...] = ()
    """Required arguments of the opening tool that no setting can hold: it cannot run."""


def approved(broker: Broker, workspace: str, ext_id: str) -> tuple[Manifest, AppSpec]:
    """The app's manifest and spec when its approval is current and it is enabled; else
    ``AppError`` saying what to do (the same standing every extension call needs)."""
    manifest = broker.manifest(workspace, ext_id)
    app = manifest.app
    if app is None:
        raise AppError(f"{ext_id} is an extension, not an MCP App")
    decision = broker.standing(workspace, ext_id)  # the one approval decision
    if decision.standing is Standing.NEVER_APPROVED:
        raise AppError(f"{manifest.name} is not approved: {AGAIN}")
    if decision.standing is Standing.STALE:
        raise AppError(f"{manifest.name} changed since it was approved: {AGAIN}")
    if not decision.allows_calls:
        raise AppError(decision.message)
    return manifest, app


async def open_app(broker: Broker, workspace: str, ext_id: str) -> OpenedApp:
    """Check the app against the server now; ``AppChanged`` lists what differs."""
    manifest, app = approved(broker, workspace, ext_id)
    document = await discovery.read_document(broker, workspace, app.server, app.uri)
    raw_tools = await (await discovery.session(broker, workspace, app.server)).tools()
    visible = tuple(
        sorted(
            (t.name, t.write and t.name not in app.marked_reads)
            for t in map(meta.app_tool, raw_tools.values())
            if t.for_app or t.name == app.opener
        )
    )
    now = AppSpec(
        app.server, app.uri, document.sha256, document.csp, document.permissions,
        app.allowed_resource_domains, app.resources, visible,
    )  # fmt: skip
    changes = drift(app, now)
    installed = broker.home.settings().workspace(workspace).extensions[ext_id]
    pinned = installed.approval.pins.get(spec.APP_CONNECTION) if installed.approval else None
    if pinned:
        current = tool_pins.pin_tools([n for n, _ in app.tools], raw_tools)
        changes += tool_pins.changes(pinned, current)
    if changes:
        raise AppChanged(CHANGED.format(name=manifest.name, n=len(changes)), changes)
    schema = raw_tools[app.opener].input_schema if app.opener in raw_tools else {}
    return OpenedApp(
        workspace, ext_id, manifest.name, app, document.html, document.prefers_border,
        manifest.settings_form, launch.settings_form(schema)[1],
    )  # fmt: skip


def drift(old: AppSpec, new: AppSpec) -> list[str]:
    """How ``new`` (the server now) differs from ``old`` (as approved), one line per change."""
    lines = []
    if old.sha256 != new.sha256:
        lines.append(f"the HTML changed (sha256 {old.sha256[:16]}… is now {new.sha256[:16]}…)")
    for key in sorted({k for k, _ in old.csp.domains} | {k for k, _ in new.csp.domains}):
        if old.csp.get(key) != new.csp.get(key):
            lines.append(f"declared {key} changed from {list(old.csp.get(key))} to {list(new.csp.get(key))}")
    if old.permissions != new.permissions:
        lines.append(f"requested permissions changed from {list(old.permissions)} to {list(new.permissions)}")
    before, after = dict(old.tools), dict(new.tools)
    for name in sorted(set(before) | set(after)):
        if name not in after:
            lines.append(f"tool {name}: no longer available to the app")
        elif name not in before:
            lines.append(f"tool {name}: now available to the app")
        elif before[name] != after[name]:
            lines.append(f"tool {name}: " + ("now writes" if after[name] else "is now read-only"))
    return lines
