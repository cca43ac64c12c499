"""An added app as Helm stores it: a generated extension folder with an ``app`` section.

``HOME/apps/<workspace digest>/<id>/`` holds ``manifest.json`` and ``app.html`` (the HTML the
user approved, for reference; what runs is the server's HTML, checked against the pinned
sha256 each time the app opens). The manifest is an ordinary one, so installing, approving,
enabling and removing work as for any extension, and its digest — which covers the ``app``
section — binds the approval to the HTML's sha256, the declared CSP and permissions, the
resource domains the user allowed, the resources the app may read, the tool that opens the
app and the tools the user marked as only reading. The opening tool's arguments are the
widget's ``settings`` form, written from the tool's input schema (``broker.apps.launch``)::

    {"id": "mcp-app.<server>.<hash>", "kind": "widget", "entry": "app.html",
     "permissions": {"write": true}, "settings": {the opening tool's arguments},
     "connections": [{"id": "app", "kind": "mcp", "server": S,
                      "operations": [read tools], "writes": [write tools]}],
     "app": {"server": S, "uri": "ui://…", "sha256": HEX, "csp": {...},
             "permissions": [...], "allowResourceDomains": [...], "resources": [...],
             "tool": the opening tool, "reads": [tools the user marked as only reading]}}
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from broker.apps.meta import Csp
from broker.kinds.base import Issue

APP_CONNECTION = "app"
ENTRY = "app.html"
APPS_FOLDER = "apps"
ID_PREFIX = "mcp-app"


@dataclass(frozen=True)
class AppSpec:
    """The ``app`` section of an added app's manifest, with the tools its connection allows."""

    server: str
    uri: str
    sha256: str
    csp: Csp = field(default_factory=Csp)
    permissions: tuple[str, ...] = ()
    allowed_resource_domains: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    tools: tuple[tuple[str, bool], ...] = ()
    """(name, write) for every tool the app may call (and the one that opens it)."""
    opener: str = ""
    """The linked tool Helm calls when the app opens and on Refresh (none: empty)."""
    marked_reads: tuple[str, ...] = ()
    """Tools without ``readOnlyHint`` the user marked at review as only reading: calls of them
    are reads (no confirmation); the tool's pinned definition keeps the mark honest."""

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "uri": self.uri,
            "sha256": self.sha256,
            "csp": self.csp.to_json(),
            "permissions": list(self.permissions),
            "allowResourceDomains": list(self.allowed_resource_domains),
            "resources": list(self.resources),
            **({"tool": self.opener} if self.opener else {}),
            **({"reads": list(self.marked_reads)} if self.marked_reads else {}),
        }

    @property
    def readable(self) -> frozenset[str]:
        """The resources ``resources/read`` may fetch: the app's own and the pinned ones."""
        return frozenset((self.uri, *self.resources))


def app_id(server: str, uri: str) -> str:
    """A stable extension id for (server, uri) that fits the manifest's id pattern."""
    slug = re.sub(r"[^a-z0-9-]+", "-", server.lower()).strip("-")[:40] or "server"
    tag = hashlib.sha256(f"{server}\x00{uri}".encode()).hexdigest()[:12]
    return f"{ID_PREFIX}.{slug}.{tag}"


def folder(home: Path, workspace: str, ext_id: str) -> Path:
    ws = hashlib.sha256(workspace.encode()).hexdigest()[:16]
    return home / APPS_FOLDER / ws / ext_id


def manifest_for(
    spec: AppSpec, name: str, description: str, settings: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    reads = sorted(n for n, w in spec.tools if not w)
    writes = sorted(n for n, w in spec.tools if w)
    raw: dict[str, Any] = {
        "id": app_id(spec.server, spec.uri),
        "name": (name.strip() or spec.uri)[:100],
        "version": "1.0.0",
        "description": (description or f"MCP App {spec.uri} of MCP server {spec.server}")[:1000],
        "kind": "widget",
        "entry": ENTRY,
        "connections": [],
        "app": spec.to_json(),
    }
    if settings:
        raw["settings"] = dict(settings)
    if spec.tools:
        conn: dict[str, Any] = {
            "id": APP_CONNECTION,
            "kind": "mcp",
            "server": spec.server,
            "operations": reads,
        }
        if writes:
            conn["writes"] = writes
            raw["permissions"] = {"write": True}
        raw["connections"] = [conn]
    return raw


def parse_app(raw: Mapping[str, Any]) -> AppSpec | None:
    """The app a validated manifest describes, or None for an ordinary extension. Only
    ``Manifest.app`` calls it: everything else asks the manifest."""
    app = raw.get("app")
    if not isinstance(app, Mapping):
        return None
    tools: list[tuple[str, bool]] = []
    for conn in raw.get("connections", []):
        if conn.get("id") == APP_CONNECTION:
            tools += [(n, False) for n in conn.get("operations", [])]
            tools += [(n, True) for n in conn.get("writes", [])]
    return AppSpec(
        server=str(app["server"]),
        uri=str(app["uri"]),
        sha256=str(app["sha256"]),
        csp=Csp.from_json(app.get("csp")),
        permissions=tuple(app.get("permissions", ())),
        allowed_resource_domains=tuple(app.get("allowResourceDomains", ())),
        resources=tuple(app.get("resources", ())),
        tools=tuple(sorted(tools)),
        opener=str(app.get("tool", "")),
        marked_reads=tuple(sorted(app.get("reads", ()))),
    )


def lint(raw: Mapping[str, Any]) -> Iterator[Issue]:
    """Rules of an ``app`` section the JSON Schema cannot express."""
    app = raw.get("app")
    if not isinstance(app, Mapping):
        return
    for i, conn in enumerate(raw.get("connections", [])):
        if not isinstance(conn, Mapping):
            continue
        if conn.get("id") != APP_CONNECTION or conn.get("kind") != "mcp":
            yield Issue(f"$.connections[{i}]", f'an app has one connection: "{APP_CONNECTION}", kind mcp')
        elif conn.get("server") != app.get("server"):
            yield Issue(f"$.connections[{i}].server", "an app calls the tools of its own server only")
    named = {
        n
        for conn in raw.get("connections", [])
        if isinstance(conn, Mapping) and conn.get("id") == APP_CONNECTION
        for key in ("operations", "writes")
        for n in conn.get(key, [])
    }
    reads = {
        n
        for conn in raw.get("connections", [])
        if isinstance(conn, Mapping) and conn.get("id") == APP_CONNECTION
        for n in conn.get("operations", [])
    }
    if "tool" in app and app["tool"] not in named:
        yield Issue("$.app.tool", f"{app['tool']!r} is not a tool of the app's connection")
    for i, tool in enumerate(app.get("reads", [])):
        if tool not in reads:
            yield Issue(f"$.app.reads[{i}]", f"{tool!r} is not one of the connection's operations")
    declared = set((app.get("csp") or {}).get("resourceDomains", []))
    for i, domain in enumerate(app.get("allowResourceDomains", [])):
        if domain not in declared:
            yield Issue(f"$.app.allowResourceDomains[{i}]", f"{domain!r} is not a declared resource domain")
