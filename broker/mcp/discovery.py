"""Finding a server's apps and reading their HTML, through the broker's shared MCP sessions.

The session is the one the broker keeps for (workspace, server) (``broker.mcp.servers``), which
the mcp kind's tool calls use too: the same profile, token, child environment and limits (30 s,
1 MiB). Nothing here is cached: review, opening an app and each ``resources/read`` ask the
server what it says now.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass

from mcp import types

from broker.apps import meta
from broker.apps.meta import AppTool, Csp
from broker.broker import Broker
from broker.errors import CallError, ErrorCode, SettingsError
from broker.mcp.session import ServerSession

MAX_RESOURCE_PAGES = 10
MAX_HTML_BYTES = meta.MAX_APP_BYTES


@dataclass(frozen=True)
class UiApp:
    """One ``ui://`` resource of a server and the tools linked to it."""

    server: str
    uri: str
    name: str
    description: str
    linked: tuple[AppTool, ...]


@dataclass(frozen=True)
class UiDocument:
    """A UI resource as read now: its HTML and what its metadata declares."""

    uri: str
    html: bytes
    csp: Csp
    permissions: tuple[str, ...]
    prefers_border: bool | None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.html).hexdigest()


async def session(broker: Broker, workspace: str, server: str) -> ServerSession:
    """The shared session with ``server`` for ``workspace`` (``CallError`` if unavailable)."""
    try:
        ws = broker.home.settings().workspace(workspace)
    except SettingsError as exc:
        raise CallError(ErrorCode.NOT_CONFIGURED, f"workspace {workspace!r} is not configured") from exc
    return await (await broker.mcp_servers()).session(ws, server)


async def tools(broker: Broker, workspace: str, server: str) -> dict[str, AppTool]:
    """Every tool of the server as an app sees it, by name."""
    listed = await (await session(broker, workspace, server)).tools()
    return {name: meta.app_tool(tool) for name, tool in listed.items()}


async def tool(broker: Broker, workspace: str, server: str, name: str) -> AppTool | None:
    """One tool of the server as an app sees it, or None when the server has no such tool (the
    check before each of an app's tool calls: it reads the session's current listing and looks
    at that one tool only)."""
    found = (await (await session(broker, workspace, server)).tools()).get(name)
    return None if found is None else meta.app_tool(found)


async def resources(broker: Broker, workspace: str, server: str) -> list[types.Resource]:
    """The resources the server lists (every page, up to a bound); none when it offers none."""
    s = await session(broker, workspace, server)
    capabilities = (await s.start()).server_capabilities
    if capabilities is None or capabilities.resources is None:
        return []
    found: list[types.Resource] = []
    cursor: str | None = None
    for _ in range(MAX_RESOURCE_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await s.request(types.ListResourcesRequest(params=params), types.ListResourcesResult)
        found += page.resources
        cursor = page.next_cursor
        if not cursor:
            break
    return found


async def list_apps(broker: Broker, workspace: str, server: str) -> list[UiApp]:
    """The server's UI resources: those it lists and those its tools link to (a server may
    leave UI-only resources out of its list), each with its linked tools, sorted by URI."""
    by_name = await tools(broker, workspace, server)
    listed = {str(r.uri): r for r in await resources(broker, workspace, server)}
    uris = {u for u in listed if u.startswith(meta.UI_SCHEME)}
    uris |= {t.resource_uri for t in by_name.values() if t.resource_uri is not None}
    apps = []
    for uri in sorted(uris):
        resource = listed.get(uri)
        linked = tuple(sorted((t for t in by_name.values() if t.resource_uri == uri), key=lambda t: t.name))
        name = app_title(resource, linked, uri)
        description = (resource.description or "") if resource is not None else ""
        apps.append(UiApp(server, uri, name, description, linked))
    return apps


def app_title(resource: types.Resource | None, linked: tuple[AppTool, ...], uri: str) -> str:
    """An app's name for people: the name its server gives the resource, else the title or name
    of the tool that opens it; its ``ui://`` URI only when the server gives neither."""
    if resource is not None and (resource.title or resource.name):
        return resource.title or resource.name
    for tool in linked:
        if tool.title or tool.name:
            return tool.title or tool.name
    return uri


async def read_document(broker: Broker, workspace: str, server: str, uri: str) -> UiDocument:
    """Read ``uri`` and check it is an app's HTML; ``refused`` when it is not."""
    if not uri.startswith(meta.UI_SCHEME):
        raise CallError(ErrorCode.REFUSED, f"{uri!r} is not a ui:// resource")
    try:
        result = await read_resource(broker, workspace, server, uri)
    except CallError as err:
        if err.code is ErrorCode.TOO_LARGE:  # over the transport's own bound, far over the app's
            raise CallError(
                ErrorCode.TOO_LARGE,
                f"the app's HTML {uri[:200]} is larger than Helm takes ({MAX_HTML_BYTES} bytes)",
            ) from err
        raise
    for content in result.contents:
        if str(content.uri) == uri:
            return _document(uri, content)
    raise CallError(ErrorCode.REFUSED, f"MCP server {server!r} sent no content for {uri}")


async def read_resource(broker: Broker, workspace: str, server: str, uri: str) -> types.ReadResourceResult:
    s = await session(broker, workspace, server)
    request = types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=uri))
    return await s.request(request, types.ReadResourceResult)


def _document(uri: str, content: types.TextResourceContents | types.BlobResourceContents) -> UiDocument:
    mime = (content.mime_type or "").replace(" ", "").lower()
    if not mime.startswith("text/html"):
        raise CallError(ErrorCode.REFUSED, f"{uri} is {content.mime_type or 'untyped'}, not an app's HTML")
    if isinstance(content, types.TextResourceContents):
        html = content.text.encode("utf-8")
    else:
        try:
            html = base64.b64decode(content.blob, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise CallError(ErrorCode.REFUSED, f"{uri} is not valid base64") from exc
    if len(html) > MAX_HTML_BYTES:
        raise CallError(
            ErrorCode.TOO_LARGE, meta.too_big(f"the app's HTML {uri[:200]}", len(html), MAX_HTML_BYTES)
        )
    return UiDocument(
        uri, html, meta.csp(content.meta), meta.permissions(content.meta), meta.prefers_border(content.meta)
    )
