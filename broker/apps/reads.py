"""An app's reads that are not tool calls, and the visibility check before each tool call.

``resources/read`` is admitted like any call (the instance's rate limit and in-flight cap),
needs the app's approval to be current, and reaches only the app's own ``ui://`` resource and
the resources pinned at approval, on the app's own server, within the mcp kind's limits.
"""

from __future__ import annotations

from typing import Any

from broker.apps import discovery, verify
from broker.apps.errors import AppError
from broker.apps.spec import AppSpec
from broker.broker import Broker
from broker.context import CallContext
from broker.errors import CallError, ErrorCode
from broker.kinds.mcp.results import check_size
from broker.ratelimit import instance_key

MAX_READ_BYTES = 1024 * 1024


async def visible_to_app(broker: Broker, workspace: str, app: AppSpec, tool: str) -> None:
    """``refused`` unless ``tool`` is a tool of the app's server whose visibility includes
    "app" now (the broker then checks it against what the user approved)."""
    tools = await discovery.tools(broker, workspace, app.server)
    found = tools.get(tool)
    if found is None:
        raise CallError(ErrorCode.REFUSED, f"{tool!r} is not a tool of MCP server {app.server!r}")
    if not found.for_app:
        raise CallError(
            ErrorCode.REFUSED, f"tool {tool!r} is not visible to apps (its visibility leaves out app)"
        )


async def read(broker: Broker, ctx: CallContext, app: AppSpec, uri: str) -> dict[str, Any]:
    """The ``ReadResourceResult`` of ``uri`` as plain JSON."""
    key = instance_key(ctx)
    admitted = broker.admission.admit(key)
    if not admitted.admitted:
        raise CallError(ErrorCode.RATE_LIMITED, admitted.reason, retry_after=admitted.retry_after)
    try:
        try:
            verify.approved(broker, ctx.workspace, ctx.extension)
        except AppError as err:
            raise CallError(ErrorCode.REFUSED, str(err)) from err
        if uri not in app.readable:
            raise CallError(ErrorCode.REFUSED, f"{uri[:200]!r} is not a resource this app may read")
        result = await discovery.read_resource(broker, ctx.workspace, app.server, uri)
        data: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        check_size(data, MAX_READ_BYTES, f"MCP server {app.server!r}")
        return data
    finally:
        broker.admission.release(key)
