"""Adding an app: what the user reviews, and the extension Helm writes when they approve it.

``review`` reads the server now: the HTML (and its sha256), what its metadata declares, the
tools visible to the app — reads apart from writes, a write being any tool without
``readOnlyHint: true``, unless the user marks it as one that only reads (off by default; a tool
whose definition changed since it was marked asks again) — the tool that opens the app and the
settings form of its arguments, and, for an app added before, what changed since its approval and which
resource domains that approval allowed. ``review_installed`` is the same review for an app
already in the workspace (the main window's Review…). ``add`` writes the app's extension folder,
installs it and approves it through ``broker.extensions`` (the one approval path); if a tool
changed between the review and the approval nothing is approved (an app added before gets its
earlier files back, under its earlier approval)::

    reviewed = await review(broker, "main", "boards", "ui://boards/main")
    show(lines(reviewed))                                # the terminal or the review dialog
    await add(broker, reviewed, allow=["https://cdn.example.com"], reads=["get-time"])
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from broker import extensions
from broker.approval import Standing
from broker.apps import launch, meta, spec
from broker.apps.errors import AppChanged, AppError
from broker.apps.meta import AppTool
from broker.apps.spec import AppSpec
from broker.apps.verify import drift
from broker.atomic import write_atomic
from broker.broker import Broker
from broker.errors import ApprovalChanged
from broker.manifest import MANIFEST_FILE, Manifest
from broker.mcp import discovery
from broker.mcp import pins as tool_pins
from broker.mcp.discovery import UiDocument
from broker.visible import one_line as shown


@dataclass(frozen=True)
class AppReview:
    """Everything the user is shown before an app is added; ``add`` binds to it."""

    workspace: str
    server: str
    uri: str
    name: str
    description: str
    document: UiDocument
    reads: tuple[AppTool, ...]
    writes: tuple[AppTool, ...]
    hidden: tuple[AppTool, ...]
    """Tools linked to the app that it may not call (their visibility leaves out "app")."""
    resources: tuple[str, ...]
    pins: Mapping[str, Any] = field(default_factory=dict)
    changes: tuple[str, ...] = ()
    installed: bool = False
    """The app is in the workspace already: this review is about approving it again."""
    allowed: tuple[str, ...] = ()
    """The resource domains its current approval allows that the app still declares."""
    opener: AppTool | None = None
    """The linked tool Helm calls when the app opens (``broker.apps.launch``)."""
    opener_schema: Mapping[str, Any] = field(default_factory=dict)
    """Its input schema, from which the app's settings form is made."""
    marked: tuple[str, ...] = ()
    """The writes its current approval marks as only reading whose definition is unchanged
    (shown ticked; a changed tool asks again)."""

    @property
    def settings(self) -> dict[str, dict[str, Any]]:
        """The widget settings form of the opening tool's arguments."""
        return launch.settings_form(self.opener_schema)[0]

    @property
    def unset(self) -> tuple[launch.Unset, ...]:
        """Required arguments of the opening tool that the settings cannot hold."""
        return launch.settings_form(self.opener_schema)[1]

    @property
    def ext_id(self) -> str:
        return spec.app_id(self.server, self.uri)

    @property
    def resource_domains(self) -> tuple[str, ...]:
        return self.document.csp.get("resourceDomains")

    def spec(self, allow: Iterable[str] = (), reads: Iterable[str] = ()) -> AppSpec:
        """What is approved: ``allow`` the resource domains, ``reads`` the writes the user
        marked as only reading."""
        allowed = tuple(sorted(set(allow)))
        marked = tuple(sorted(set(reads)))
        writes = {t.name for t in self.writes} | (
            {self.opener.name} if self.opener is not None and self.opener.write else set()
        )
        odd_reads = [t for t in marked if t not in writes]
        if odd_reads:
            raise AppError(
                f"{', '.join(odd_reads)}: not a tool of the app that Helm would confirm; "
                "only those can be marked as only reading"
            )
        unknown = [d for d in allowed if d not in self.resource_domains]
        if unknown:
            raise AppError(f"{', '.join(unknown)}: not a resource domain the app declares")
        odd = [d for d in allowed if meta.origin(d) is None]
        if odd:
            raise AppError(f"{', '.join(odd)}: not a plain https origin; Helm cannot allow it")
        return AppSpec(
            server=self.server,
            uri=self.uri,
            sha256=self.document.sha256,
            csp=self.document.csp,
            permissions=self.document.permissions,
            allowed_resource_domains=allowed,
            resources=self.resources,
            tools=tuple(sorted((n, w and n not in marked) for n, w in self._tools().items())),
            opener=self.opener.name if self.opener is not None else "",
            marked_reads=marked,
        )

    def _tools(self) -> dict[str, bool]:
        """(name → write by its hint) of every tool the app's connection declares."""
        tools = {t.name: False for t in self.reads} | {t.name: True for t in self.writes}
        if self.opener is not None:
            tools.setdefault(self.opener.name, self.opener.write)
        return tools


async def review(broker: Broker, workspace: str, server: str, uri: str) -> AppReview:
    """Read the app as the server offers it now (``CallError`` when the server cannot)."""
    apps = {a.uri: a for a in await discovery.list_apps(broker, workspace, server)}
    found = apps.get(uri)
    if found is None:
        raise AppError(f"MCP server {server!r} offers no app {uri!r}; see `helm app list --server {server}`")
    document = await discovery.read_document(broker, workspace, server, uri)
    raw_tools = await (await discovery.session(broker, workspace, server)).tools()
    tools = sorted((meta.app_tool(t) for t in raw_tools.values()), key=lambda t: t.name)
    visible = [t for t in tools if t.for_app]
    listed = await discovery.resources(broker, workspace, server)
    readable = tuple(sorted({str(r.uri) for r in listed} - {uri}))
    opener = launch.opener(found.linked)
    declared = [t.name for t in visible] + ([opener.name] if opener is not None else [])
    pinned = tool_pins.pin_tools(declared, raw_tools)
    schema = raw_tools[opener.name].input_schema if opener is not None and opener.name in raw_tools else {}
    draft = AppReview(
        workspace=workspace,
        server=server,
        uri=uri,
        name=found.name,
        description=found.description,
        document=document,
        reads=tuple(t for t in visible if not t.write),
        writes=tuple(t for t in visible if t.write),
        hidden=tuple(t for t in found.linked if not t.for_app),
        resources=readable,
        pins=pinned,
        opener=opener,
        opener_schema=dict(schema or {}),
    )
    return _with_changes(broker, draft)


async def review_installed(broker: Broker, workspace: str, ext_id: str) -> AppReview:
    """``review`` of an app already in ``workspace``: its server and URI are its manifest's."""
    app = broker.manifest(workspace, ext_id).app
    if app is None:
        raise AppError(f"{ext_id} is an extension, not an MCP App")
    if spec.app_id(app.server, app.uri) != ext_id:
        raise AppError(f"the manifest of {ext_id} names another app; remove it and add the app again")
    return await review(broker, workspace, app.server, app.uri)


def _with_changes(broker: Broker, draft: AppReview) -> AppReview:
    """The review, with what differs from the app as approved before (if it was)."""
    decision = broker.standing(draft.workspace, draft.ext_id)
    if decision.installed is None:
        return draft
    draft = replace(draft, installed=True)
    approval = decision.installed.approval
    old = decision.manifest.app if decision.manifest is not None else None
    if approval is None or old is None:
        return draft
    pinned = tool_pins.changes(approval.pins.get(spec.APP_CONNECTION) or {}, draft.pins)
    if decision.standing is Standing.STALE:  # the manifest on disk is not what was approved
        stale = "the app's manifest in Helm's home is not the one you approved; approving writes it anew"
        return replace(draft, changes=tuple(dict.fromkeys([stale, *pinned])))
    allowed = tuple(a for a in old.allowed_resource_domains if a in draft.resource_domains)
    marked = _still_marked(old.marked_reads, approval.pins.get(spec.APP_CONNECTION) or {}, draft)
    lines = drift(old, draft.spec(allowed, marked)) + pinned
    return replace(draft, changes=tuple(dict.fromkeys(lines)), allowed=allowed, marked=marked)


def _still_marked(marked: Iterable[str], approved: Mapping[str, Any], draft: AppReview) -> tuple[str, ...]:
    """The tools marked as only reading whose definition is the one pinned when they were
    marked, and which Helm would still confirm: a changed tool asks again."""
    writes = {n for n, w in draft._tools().items() if w}
    old, new = approved.get("tools") or {}, draft.pins.get("tools") or {}
    same = {n for n in writes if old.get(n) and new.get(n) and old[n].get("digest") == new[n].get("digest")}
    return tuple(sorted(n for n in marked if n in same))


async def add(
    broker: Broker, reviewed: AppReview, allow: Iterable[str] = (), reads: Iterable[str] = ()
) -> Manifest:
    """Write the app's extension, install it in the workspace and approve what was reviewed.

    ``allow`` names the declared resource domains the user allowed (none by default), ``reads``
    the tools Helm would confirm that the user marked as only reading (none by default). An app
    added before stays enabled or disabled as it was: approving is not turning it on.
    Raises ``AppChanged`` (nothing approved) when a tool changed since the review.
    """
    app = reviewed.spec(allow, reads)
    raw = spec.manifest_for(app, reviewed.name, reviewed.description, reviewed.settings)
    folder = spec.folder(broker.home.path, reviewed.workspace, reviewed.ext_id)
    before = broker.home.settings().workspace(reviewed.workspace).extensions.get(reviewed.ext_id)
    kept = _files(folder) if before is not None else {}
    text = (json.dumps(raw, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    _write(folder, {spec.ENTRY: reviewed.document.html, MANIFEST_FILE: text})
    manifest = extensions.install(broker.home, reviewed.workspace, folder)
    if before is not None and not before.enabled:  # no await since install: it never runs meanwhile
        extensions.set_enabled(broker.home, reviewed.workspace, reviewed.ext_id, False)
    changed = await _approve(broker, reviewed)
    if not changed:
        return manifest
    # Nothing of what was not reviewed may stay approved. An app added before gets its files
    # back: its earlier approval stands (and opens nothing the server no longer serves as
    # approved); a new app leaves the workspace, to be added (and reviewed) again.
    if kept.keys() == {spec.ENTRY, MANIFEST_FILE}:
        _write(folder, kept)
        raise AppChanged("the app's tools changed while you reviewed it; nothing was approved", changed)
    extensions.remove(broker.home, reviewed.workspace, reviewed.ext_id)
    raise AppChanged("the app's tools changed while you reviewed it; add it again", changed)


def _files(folder: Path) -> dict[str, bytes]:
    """The app's files as they are, to put back if the new version is not approved."""
    return {n: (folder / n).read_bytes() for n in (spec.ENTRY, MANIFEST_FILE) if (folder / n).is_file()}


def _write(folder: Path, files: Mapping[str, bytes]) -> None:
    for name, data in files.items():  # the HTML first: the manifest is what makes it the app's
        write_atomic(folder / name, data, mode=0o600)


async def _approve(broker: Broker, reviewed: AppReview) -> list[str]:
    """Approve through the extensions' one approval path, only if the tools are as reviewed;
    else approve nothing and say what changed."""
    snapshot = await extensions.review(broker, reviewed.workspace, reviewed.ext_id)
    now = snapshot.pins.get(spec.APP_CONNECTION) or {}
    changed = tool_pins.changes(reviewed.pins, now) if reviewed.pins.get("tools") else []
    if changed:
        return changed
    try:
        await extensions.approve(broker, snapshot)  # refuses a change since the snapshot
    except ApprovalChanged as err:
        return [str(err)]
    return []


def lines(reviewed: AppReview) -> list[str]:
    """The review as plain lines, for the terminal; each string from the server on one line
    (``broker.visible.one_line``)."""
    doc = reviewed.document
    out = [
        f"App {shown(reviewed.name)} ({shown(reviewed.uri)})",
        f"MCP server: {shown(reviewed.server)}",
        f"HTML sha256: {doc.sha256} ({len(doc.html)} bytes); pinned in the approval",
    ]
    out += [f"Changed since your last approval: {shown(c)}" for c in reviewed.changes]
    out += _opening(reviewed)
    out += [f"  read   tool {shown(t.name)}" for t in reviewed.reads]
    for t in reviewed.writes:
        if t.name in reviewed.marked:
            out.append(f"  WRITE  tool {shown(t.name)} — marked by you as only reading (no confirmation)")
        else:
            out.append(
                f"  WRITE  tool {shown(t.name)} — confirmed each time (--read marks it as only reading)"
            )
    if not reviewed.reads and not reviewed.writes:
        out.append("  (the app may call no tools)")
    out += [f"  not available to the app: tool {shown(t.name)} "
            f"(visibility {shown(', '.join(t.visibility)) or 'none'})"
            for t in reviewed.hidden]  # fmt: skip
    out += _declared(reviewed)
    return out


def _opening(reviewed: AppReview) -> list[str]:
    tool = reviewed.opener
    if tool is None:
        return ["Opens with no tool call (no tool is linked to it)"]
    how = "a read" if not tool.write else "a write: confirmed each time unless you mark it"
    out = [f"Opens by calling tool {shown(tool.name)} ({how}); its arguments are the app's settings"]
    for key, setting in reviewed.settings.items():
        default = f", default {shown(json.dumps(setting['default']))}" if "default" in setting else ""
        need = ", required" if setting.get("required") else ""
        out.append(f"  setting {shown(key)} ({setting['type']}{default}{need})")
    out += [f"  argument {shown(u.name)} cannot be set in Helm: {u.why}" for u in reviewed.unset]
    return out


def _declared(reviewed: AppReview) -> list[str]:
    csp = reviewed.document.csp
    out = []
    for key, verdict in (
        ("connectDomains", "blocked: apps reach the network only through Helm's tool calls"),
        ("frameDomains", "blocked: apps cannot embed other pages"),
        ("baseUriDomains", "ignored"),
        ("resourceDomains", "blocked unless you allow them (images, fonts, styles, scripts)"),
    ):
        for domain in csp.get(key):
            mark = " (allowed by your last approval)" if domain in reviewed.allowed else ""
            out.append(f"  declared {key}: {shown(domain)} — {verdict}{mark}")
    for permission in reviewed.document.permissions:
        out.append(f"  asks for permission {shown(permission)} — not granted: Helm grants apps none")
    for uri in reviewed.resources:
        out.append(f"  may read resource {shown(uri)}")
    return out
