"""The ``tdt-mcp`` kind: the workspace's own ``tdt mcp serve`` child.

The TDT envelope ``{api_version, ok, data, coverage, warnings, error}`` is returned exactly as
the server sent it. TDT write tools exist only in the everyday profile: Helm refuses them unless
the workspace turned everyday on, and then starts the child with ``--profile everyday``. Every
write carries a ``user_instruction`` Helm writes from its confirmation dialog; an extension may
never send its own. Hash-bound writes (``*_apply`` with ``expected_sha256``) need a preview that
returned that ``proposal_sha256`` through Helm, and the dialog shows that preview.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from broker.errors import CallError, ErrorCode
from broker.kinds.base import JSON, Call, KindEnv, WriteDetails
from broker.kinds.mcp import TDT
from broker.kinds.mcp.adapter import wire_args
from broker.kinds.mcp.rules import McpConnection
from broker.mcp.pool import SessionPool, stdio_opener, working_folder
from broker.mcp.profiles import safe_environment
from broker.mcp.results import check_size, tdt_envelope
from broker.mcp.servers import DEFAULT_LIMITS
from broker.mcp.session import McpLimits, ServerSession
from broker.settings import Workspace

DEFAULT_COMMAND = ("tdt", "mcp", "serve")
EVERYDAY_ARGS = ("--profile", "everyday")
INSTRUCTION_FIELD = "user_instruction"
HASH_ARG = "expected_sha256"
PROPOSAL_FIELD = "proposal_sha256"
LABEL = "the TDT server"
_MAX_INSTRUCTION = 240  # TDT accepts one line of up to 240 characters
_MAX_PREVIEWS = 32
_MAX_PREVIEW_TEXT = 64 * 1024


def command_for(workspace: Workspace) -> list[str]:
    """The child's command line: the workspace's TDT command (or ``tdt mcp serve``), plus
    ``--profile everyday`` when the workspace turned everyday on."""
    base = list(workspace.tdt_command or DEFAULT_COMMAND)
    return base + list(EVERYDAY_ARGS) if workspace.everyday else base


def user_instruction(tool: str, extension: str) -> str:
    text = f"User clicked Approve on {tool} for {extension} in Helm"
    return text if len(text) <= _MAX_INSTRUCTION else text[: _MAX_INSTRUCTION - 1] + "…"


class _Previews:
    """Recent previews per (workspace, extension): proposal hash → (tool, text shown)."""

    def __init__(self) -> None:
        self._by_caller: dict[tuple[str, str], OrderedDict[str, tuple[str, str]]] = {}

    def remember(self, call: Call[McpConnection], envelope: Mapping[str, Any]) -> None:
        data = envelope.get("data")
        proposal = data.get(PROPOSAL_FIELD) if isinstance(data, dict) else None
        if not envelope.get("ok") or not isinstance(proposal, str):
            return
        text = json.dumps(data, ensure_ascii=False, indent=2)
        if len(text) > _MAX_PREVIEW_TEXT:
            text = text[:_MAX_PREVIEW_TEXT] + "\n… (preview cut here; the full preview is larger)"
        book = self._by_caller.setdefault((call.ctx.workspace, call.ctx.extension), OrderedDict())
        book[proposal] = (call.operation, text)
        book.move_to_end(proposal)
        while len(book) > _MAX_PREVIEWS:
            book.popitem(last=False)

    def find(self, call: Call[McpConnection], proposal: str) -> tuple[str, str] | None:
        book = self._by_caller.get((call.ctx.workspace, call.ctx.extension))
        return None if book is None else book.get(proposal)


class TdtKind:
    """One per broker; one ``tdt mcp serve`` child per workspace."""

    def __init__(self, env: KindEnv, limits: McpLimits | None = None) -> None:
        self.env = env
        self.limits = limits or DEFAULT_LIMITS
        self._pool = SessionPool()
        self._previews = _Previews()

    async def session(self, workspace: Workspace) -> ServerSession:
        command = command_for(workspace)
        hint = " (is tdt installed? set the command with: helm workspace tdt-command)"

        def make() -> ServerSession:
            env = safe_environment()
            opener = stdio_opener(command, env, working_folder(workspace), self.limits)
            return ServerSession(LABEL, opener, self.limits, start_hint=hint)

        return await self._pool.get((workspace.name, "tdt"), (tuple(command), str(workspace.root)), make)

    def _checked_args(self, call: Call[McpConnection]) -> dict[str, JSON]:
        """The arguments Helm sends: the extension's, plus Helm's user_instruction for a write."""
        if INSTRUCTION_FIELD in call.args:
            raise CallError(ErrorCode.REFUSED, "user_instruction is written by Helm; do not send it")
        if not call.write:
            return dict(call.args)
        if not call.workspace.everyday:
            raise CallError(
                ErrorCode.REFUSED,
                "TDT write tools need the everyday profile; the user turns it on for this workspace",
            )
        return {**call.args, INSTRUCTION_FIELD: user_instruction(call.operation, call.ctx.extension)}

    def _preview(self, call: Call[McpConnection]) -> tuple[str, str] | None:
        proposal = call.args.get(HASH_ARG)
        found = self._previews.find(call, proposal) if isinstance(proposal, str) else None
        if found is None and call.write and call.operation.endswith("_apply"):
            raise CallError(
                ErrorCode.REFUSED,
                "call the matching preview tool first and apply with the proposal_sha256 it returned",
            )
        return found

    # -- the Kind protocol ---------------------------------------------------------------
    async def pin(self, workspace: Workspace, conn: McpConnection) -> Mapping[str, JSON]:
        return {}  # the workspace's own TDT: its tools are Helm's known catalogue, not pinned

    async def describe(self, call: Call[McpConnection]) -> WriteDetails:
        sent = self._checked_args(call)
        preview = self._preview(call)
        fields = [("MCP server", LABEL), ("Tool", call.operation), ("Arguments", wire_args(sent))]
        if preview is not None:
            fields.append(("Preview", f"from {preview[0]}, proposal {call.args[HASH_ARG]}"))
        return TDT.confirm.details(
            fields=tuple(fields),
            request=f"{call.operation} {wire_args(sent)}",
            binding={"server": "tdt", "tool": call.operation, "args": sent},
            diff=None if preview is None else preview[1],
        )

    async def execute(self, call: Call[McpConnection]) -> dict[str, JSON]:
        sent = self._checked_args(call)
        if call.write:
            self._preview(call)
        session = await self.session(call.workspace)
        result = await session.call_tool(call.operation, sent)
        envelope = tdt_envelope(result)
        check_size(envelope, self.limits.max_bytes, LABEL)
        if not call.write:
            self._previews.remember(call, envelope)
        return envelope

    async def aclose(self) -> None:
        await self._pool.aclose()
