"""An app's reads that are not tool calls, and the visibility check before each tool call.

``resources/read`` (and ``resources/list``: those resources as the server lists them now) is a
built-in call of the app's ``app`` connection (``broker.builtin``): the broker admits it like
any call (the instance's rate limit and in-flight cap, the kill switch, one Activity record),
and ``reader`` then needs the app's approval to be current, reaches only the app's own
``ui://`` resource and the resources pinned at approval, on the app's own server, within the
mcp kind's limits, and scrubs the secrets Helm gave that server from the answer (as a tool
call's are, ``broker.redact``; the audit log records that it did). A ``ui://`` resource is the
app's own and is bounded as its HTML is (``meta.MAX_APP_BYTES``); any other by the mcp kind's
1 MiB.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from broker.apps import verify
from broker.apps.errors import AppError
from broker.apps.meta import MAX_APP_BYTES, UI_SCHEME, too_big
from broker.apps.spec import APP_CONNECTION, AppSpec
from broker.audit import AuditRecord
from broker.broker import Broker
from broker.builtin import Handler
from broker.context import CallContext
from broker.errors import CallError, ErrorCode
from broker.jsonutil import canonical
from broker.mcp import discovery
from broker.redact import Scrubber

MAX_READ_BYTES = 1024 * 1024
READ = "resources/read"
LIST = "resources/list"


async def visible_to_app(broker: Broker, workspace: str, app: AppSpec, tool: str) -> None:
    """``refused`` unless ``tool`` is a tool of the app's server whose visibility includes
    "app" now (the broker then checks it against what the user approved)."""
    found = await discovery.tool(broker, workspace, app.server, tool)
    if found is None:
        raise CallError(ErrorCode.REFUSED, f"{tool!r} is not a tool of MCP server {app.server!r}")
    if not found.for_app:
        raise CallError(
            ErrorCode.REFUSED, f"tool {tool!r} is not visible to apps (its visibility leaves out app)"
        )


def reader(broker: Broker, ctx: CallContext, app: AppSpec) -> Handler:
    """The handler of the app's ``resources/read``: ``{uri}`` → the ``ReadResourceResult`` as
    plain JSON, without the server's secrets."""

    async def read(args: Mapping[str, Any]) -> dict[str, Any]:
        uri = args.get("uri")
        if not isinstance(uri, str):
            raise CallError(ErrorCode.REFUSED, "resources/read needs a uri")
        try:
            verify.approved(broker, ctx.workspace, ctx.extension)
        except AppError as err:
            raise CallError(ErrorCode.REFUSED, str(err)) from err
        if uri not in app.readable:
            raise CallError(ErrorCode.REFUSED, f"{uri[:200]!r} is not a resource this app may read")
        session = await discovery.session(broker, ctx.workspace, app.server)
        scrubber = Scrubber(session.secrets)
        try:
            result = await discovery.read_resource(broker, ctx.workspace, app.server, uri)
            data: dict[str, Any] = _as_sent(result)
            _check_size(data, uri)
        except CallError as err:
            scrubber.error(err)
            _record(broker, ctx, scrubber.count, err.code.value)
            raise
        clean: dict[str, Any] = scrubber.value(data)
        _record(broker, ctx, scrubber.count, "ok")
        return clean

    return read


def lister(broker: Broker, ctx: CallContext, app: AppSpec) -> Handler:
    """The handler of the app's ``resources/list``: the resources this app may read, as the
    server lists them now (never one it was not allowed at review), without the server's
    secrets."""

    async def listing(_args: Mapping[str, Any]) -> dict[str, Any]:
        try:
            verify.approved(broker, ctx.workspace, ctx.extension)
        except AppError as err:
            raise CallError(ErrorCode.REFUSED, str(err)) from err
        session = await discovery.session(broker, ctx.workspace, app.server)
        scrubber = Scrubber(session.secrets)
        listed = await discovery.resources(broker, ctx.workspace, app.server)
        found = [_as_sent(r) for r in listed if r.uri in app.readable]
        clean: dict[str, Any] = scrubber.value({"resources": found})
        _record(broker, ctx, scrubber.count, "ok", LIST)
        return clean

    return listing


def _as_sent(model: BaseModel) -> dict[str, Any]:
    """The fields the server sent, by their wire names: none the SDK fills in with its defaults
    (such as a read's ``ttlMs`` or ``resultType``) reaches the app as if the server had said it."""
    data: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=True)
    return data


def _check_size(data: dict[str, Any], uri: str) -> None:
    """``too_large`` naming the resource and by how much it is over its bound."""
    own = uri.startswith(UI_SCHEME)
    limit = MAX_APP_BYTES if own else MAX_READ_BYTES
    size = len(canonical(data).encode("utf-8"))
    if size > limit:
        what = f"the app's resource {uri[:200]}" if own else f"the resource {uri[:200]}"
        raise CallError(ErrorCode.TOO_LARGE, too_big(what, size, limit))


def _record(broker: Broker, ctx: CallContext, count: int, outcome: str, operation: str = READ) -> None:
    if count:
        broker.audit.record(
            AuditRecord(
                workspace=ctx.workspace, extension=ctx.extension, connection=APP_CONNECTION, kind="mcp",
                operation=operation, decision="redacted", outcome=outcome,
                title=f"Helm removed {count} occurrence(s) of a secret it sent from the answer",
            )
        )  # fmt: skip
