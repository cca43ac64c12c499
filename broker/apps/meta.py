"""What an MCP server says about its apps, read from tool and resource metadata (no I/O).

MCP Apps (the ``io.modelcontextprotocol/ui`` extension, spec 2026-01-26) links tools to
``ui://`` HTML resources through ``_meta.ui``. A tool's ``visibility`` says who may call it:
``"model"``, ``"app"`` or both (the default when it is left out); an app may only ever call the
tools of its own server whose visibility includes ``"app"``. Helm counts every tool without
``readOnlyHint: true`` as a write, unless the user marked it at review as one that only reads
(``AppSpec.marked_reads``, pinned with the tool's definition). Anything a server sends here is
untrusted text: values of the wrong shape are dropped, never guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # no MCP library needed to lint a manifest
    from mcp import types

UI_SCHEME = "ui://"
UI_MIME = "text/html;profile=mcp-app"
EXTENSION_ID = "io.modelcontextprotocol/ui"
PROTOCOL_VERSION = "2026-01-26"
DEFAULT_VISIBILITY = ("model", "app")
CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
PERMISSION_KEYS = ("camera", "microphone", "geolocation", "clipboardWrite")
MAX_DOMAINS = 32
MAX_DOMAIN_CHARS = 512
MAX_APP_BYTES = 8 * 1024 * 1024
"""The bound of an app's HTML and of its own ``ui://`` resources: real bundles inline their
scripts, styles and fonts (the official PDF viewer is 4.3 MB), so an app gets more room than a
tool's result (1 MiB); what is approved is still pinned by its sha256."""
MAX_MESSAGE_CHARS = 4 * 1024 * 1024
"""The longest JSON-RPC message (as JSON text) Helm takes from an app; a longer one is refused
in the host page's isolated world before it reaches Helm."""


@dataclass(frozen=True)
class AppTool:
    """One tool of the server as an app sees it."""

    name: str
    description: str
    visibility: tuple[str, ...]
    read_only: bool
    resource_uri: str | None
    title: str = ""
    """The tool's title for people (``title``, else its annotations' ``title``), if it has one."""

    @property
    def for_app(self) -> bool:
        return "app" in self.visibility

    @property
    def write(self) -> bool:
        return not self.read_only


@dataclass(frozen=True)
class Csp:
    """The domains a UI resource declares, by CSP key (``connectDomains``…), as declared."""

    domains: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def get(self, key: str) -> tuple[str, ...]:
        return dict(self.domains).get(key, ())

    def to_json(self) -> dict[str, list[str]]:
        return {key: list(values) for key, values in self.domains if values}

    @classmethod
    def from_json(cls, raw: Any) -> Csp:
        if not isinstance(raw, Mapping):
            return cls()
        out = []
        for key in CSP_KEYS:
            values = raw.get(key)
            if isinstance(values, list):
                kept = tuple(v for v in values[:MAX_DOMAINS] if isinstance(v, str) and v)
                kept = tuple(v[:MAX_DOMAIN_CHARS] for v in kept)
                if kept:
                    out.append((key, kept))
        return cls(tuple(out))


def too_big(what: str, size: int, limit: int) -> str:
    """A refusal that names what was too big and by how much (``what`` starts the sentence)."""
    return f"{what} is {_amount(size)}, {_amount(size - limit)} more than Helm takes ({_amount(limit)})"


def _amount(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MiB ({size} bytes)"
    if size >= 1024:
        return f"{size / 1024:.1f} KiB ({size} bytes)"
    return f"{size} bytes"


def _ui(meta: Mapping[str, Any] | None) -> Mapping[str, Any]:
    ui = (meta or {}).get("ui")
    return ui if isinstance(ui, Mapping) else {}


def visibility(tool: types.Tool) -> tuple[str, ...]:
    """Who may call ``tool``: the declared list, or both model and app when it is left out."""
    declared = _ui(tool.meta).get("visibility")
    if not isinstance(declared, list):
        return DEFAULT_VISIBILITY
    return tuple(v for v in declared if v in ("model", "app"))


def resource_uri(tool: types.Tool) -> str | None:
    """The UI resource the tool is linked to (``_meta.ui.resourceUri``, or the older flat key)."""
    uri = _ui(tool.meta).get("resourceUri")
    if not isinstance(uri, str):
        flat = (tool.meta or {}).get("ui/resourceUri")
        uri = flat if isinstance(flat, str) else None
    return uri if uri is not None and uri.startswith(UI_SCHEME) else None


def app_tool(tool: types.Tool) -> AppTool:
    read_only = bool(tool.annotations is not None and tool.annotations.read_only_hint is True)
    title = tool.title or (tool.annotations.title if tool.annotations is not None else None) or ""
    return AppTool(tool.name, tool.description or "", visibility(tool), read_only, resource_uri(tool), title)


def permissions(meta: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The browser permissions a resource asks for (``_meta.ui.permissions``), known ones only."""
    asked = _ui(meta).get("permissions")
    if not isinstance(asked, Mapping):
        return ()
    return tuple(k for k in PERMISSION_KEYS if k in asked)


def csp(meta: Mapping[str, Any] | None) -> Csp:
    return Csp.from_json(_ui(meta).get("csp"))


def prefers_border(meta: Mapping[str, Any] | None) -> bool | None:
    value = _ui(meta).get("prefersBorder")
    return value if isinstance(value, bool) else None


_ORIGIN = re.compile(
    r"^(?:https://(?:\*\.)?[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*"
    r"|http://(?:127\.0\.0\.1|localhost))(?::[0-9]{1,5})?$"
)


def origin(domain: str) -> str | None:
    """``domain`` as a CSP source when it is a plain origin (https, or http on loopback, an
    optional ``*.`` subdomain wildcard and port, no path); None for anything else."""
    candidate = domain.strip().lower().rstrip("/")
    return candidate if _ORIGIN.match(candidate) else None
