"""The ``mcp`` kind (tools of an MCP server the user adds) and the ``tdt-mcp`` kind (the
workspace's own TDT server, ``tdt --workspace ROOT mcp serve``): both call tools over an MCP session.

Its parts: ``rules`` (the connection model, lint and review), ``form`` and ``cli`` (Settings
and ``helm mcp``), ``adapter`` (``mcp``) and ``tdt`` (``tdt-mcp``: the child per workspace), with
``shape`` (the TDT envelope, Helm's errors in it), ``tdt_actions`` (a write's Action line and the
``user_instruction`` made of it) and ``tdt_previews`` (the previews kept in the home). The
sessions, the server profiles and the pinned tool definitions are shared with MCP Apps and live
in ``broker.mcp``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from broker.kinds.mcp import form, rules
from broker.kinds.mcp.schema import SCHEMA
from broker.kinds.mcp.shape import TDT_ENVELOPE
from broker.kinds.spec import ConfirmText, KindSpec
from broker.mcp import profiles

if TYPE_CHECKING:
    from broker.kinds.mcp.adapter import McpKind
    from broker.kinds.mcp.tdt import TdtKind

MCP: KindSpec[rules.McpConnection, profiles.Profile, McpKind] = KindSpec(
    name="mcp",
    order=20,
    parse=rules.parse,
    lint=rules.lint,
    review=rules.review,
    schema=SCHEMA,
    schema_def="mcp",
    adapter="broker.kinds.mcp.adapter:McpKind",
    confirm=ConfirmText(
        "Confirm tool call",
        "wants to call a tool of an MCP server",
        "Tool call",
        in_request=("Tool", "Arguments"),
    ),
    profiles=profiles.MCP_SERVERS,
    form=form.FORM,
    probe=form.probe,
    cli="broker.kinds.mcp.cli:register",
)

TDT: KindSpec[rules.McpConnection, Any, TdtKind] = KindSpec(
    name="tdt-mcp",
    order=30,
    parse=rules.parse,
    lint=rules.lint,
    review=rules.review,
    schema=SCHEMA,
    schema_def="tdt",
    adapter="broker.kinds.mcp.tdt:TdtKind",
    confirm=ConfirmText(
        "Confirm tool call", "wants to call a TDT tool", "Tool call", in_request=("Tool", "Arguments")
    ),
    envelope=TDT_ENVELOPE,
)

SPECS = (MCP, TDT)
