"""The ``tdt-mcp`` kind: the workspace's own TDT server, one child per workspace.

Helm runs ``<program> --workspace <workspace root> mcp serve --profile read-only`` (or
``--profile everyday`` when the workspace turned it on), where ``<program>`` is ``tdt`` or the
workspace's ``tdt-command`` (the executable and any wrapper arguments). Turning everyday on or
off starts a new child for the next call; the old one ends when its calls in flight have their
answers, so none is cut.

TDT's envelope ``{api_version, ok, data, coverage, warnings, error}`` is returned exactly as the
server sent it, and Helm's own errors take the same keys (``broker.kinds.mcp.shape``). TDT write
tools exist only in the everyday profile: Helm refuses them unless the workspace turned everyday
on. Every write carries a ``user_instruction`` Helm writes from its dialog's Action line
(``broker.kinds.mcp.tdt_actions``); an extension may never send its own. A hash-bound write
(``*_apply`` with ``expected_sha256``, and ``tdt_candidate_review``) needs a preview that returned
that hash through Helm to the same extension, kept in the home (``tdt_previews``), and the
dialog shows that preview. Helm never retries a write: a failure after sending says
``inspect_outcome``, and the extension reads TDT's ``*_status`` tools, which are reads.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from broker.errors import CallError, ErrorCode
from broker.kinds.base import JSON, Call, KindEnv, WriteDetails
from broker.kinds.mcp import TDT
from broker.kinds.mcp.adapter import wire_args
from broker.kinds.mcp.rules import McpConnection
from broker.kinds.mcp.tdt_actions import action, user_instruction
from broker.kinds.mcp.tdt_previews import Preview, PreviewBook, shown_text
from broker.mcp.pool import stdio_opener, working_folder
from broker.mcp.profiles import safe_environment
from broker.mcp.results import check_size, tdt_envelope
from broker.mcp.servers import DEFAULT_LIMITS
from broker.mcp.session import McpLimits, ServerSession
from broker.settings import Workspace

log = logging.getLogger("helm.mcp")

DEFAULT_PROGRAM = ("tdt",)
SERVE_ARGS = ("mcp", "serve")
INSTRUCTION_FIELD = "user_instruction"
HASH_ARG = "expected_sha256"
PROPOSAL_FIELD = "proposal_sha256"
CANDIDATE_REVIEW = "tdt_candidate_review"
CANDIDATE_READS = frozenset({"tdt_candidate_read", "tdt_candidate_review_status"})
"""The reads that show a candidate whole: their ``revision`` is the hash a review applies to."""
LABEL = "the TDT server"
START_HINT = " (is tdt installed and on PATH? or set its program with: helm workspace tdt-command)"


def program_of(workspace: Workspace) -> list[str]:
    """The executable and wrapper arguments: the workspace's ``tdt-command``, or ``tdt``.

    A command saved by an older Helm ended in ``mcp serve`` (Helm now adds that itself), so a
    trailing ``mcp serve`` is dropped rather than given twice."""
    program = list(workspace.tdt_command or DEFAULT_PROGRAM)
    if len(program) > 2 and tuple(program[-2:]) == SERVE_ARGS:
        program = program[:-2]
    return program


def command_for(workspace: Workspace) -> list[str]:
    """The child's whole command line (see the module docstring)."""
    profile = "everyday" if workspace.everyday else "read-only"
    return [
        *program_of(workspace),
        "--workspace",
        str(workspace.root),
        *SERVE_ARGS,
        "--profile",
        profile,
    ]


def preview_tool(apply: str) -> str:
    """The preview that goes with an apply: TDT names them alike (``tdt_brain_names_apply`` and
    ``tdt_brain_names_preview``, ``tdt_project_remove_apply`` and ``…_preview``…)."""
    return apply.removesuffix("_apply") + "_preview"


def is_hash_bound(tool: str) -> bool:
    """A write TDT binds to a preview's hash: its dialog shows that preview."""
    return tool == CANDIDATE_REVIEW or tool.endswith("_apply")


@dataclass
class _Child:
    """The live TDT child of one workspace: its command line and its calls in flight."""

    command: tuple[str, ...]
    session: ServerSession
    calls: int = 0
    retired: bool = False


class TdtKind:
    """One per broker; one TDT child per workspace."""

    def __init__(self, env: KindEnv, limits: McpLimits | None = None) -> None:
        self.env = env
        self.limits = limits or DEFAULT_LIMITS
        self._children: dict[str, _Child] = {}
        self._lock = asyncio.Lock()
        self._draining: list[_Child] = []  # retired, with calls still in flight
        self._closing: set[asyncio.Task[None]] = set()
        self.previews = PreviewBook(env.home.path)

    # -- the children ----------------------------------------------------------------------
    async def _take(self, workspace: Workspace) -> _Child:
        """The workspace's child for one more call; a changed command line starts a new one."""
        command = tuple(command_for(workspace))
        async with self._lock:
            current = self._children.get(workspace.name)
            if current is None or current.command != command:
                if current is not None:
                    self._retire(current)
                opener = stdio_opener(command, safe_environment(), working_folder(workspace), self.limits)
                current = _Child(command, ServerSession(LABEL, opener, self.limits, start_hint=START_HINT))
                self._children[workspace.name] = current
            current.calls += 1
            return current

    def _give_back(self, child: _Child) -> None:
        child.calls -= 1
        if child.retired and child.calls == 0:
            self._close_later(child)

    def _retire(self, child: _Child) -> None:
        """No new call goes to ``child``; it ends once its calls in flight have their answers."""
        child.retired = True
        if child.calls == 0:
            self._close_later(child)
        else:
            self._draining.append(child)

    def _close_later(self, child: _Child) -> None:
        # Owned by the kind (``aclose`` waits for it), so the answer that retired the child is
        # not held up while it ends.
        if child in self._draining:
            self._draining.remove(child)
        task = asyncio.create_task(child.session.aclose(), name="tdt-retire")
        self._closing.add(task)
        task.add_done_callback(self._closed)

    def _closed(self, task: asyncio.Task[None]) -> None:
        self._closing.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("closing %s failed: %r", LABEL, task.exception())

    async def _call_tool(self, workspace: Workspace, tool: str, args: dict[str, JSON]) -> dict[str, JSON]:
        child = await self._take(workspace)
        try:
            result = await child.session.call_tool(tool, args)
        finally:
            self._give_back(child)
        envelope = tdt_envelope(result)
        check_size(envelope, self.limits.max_bytes, LABEL)
        return envelope

    # -- arguments, instruction and previews -----------------------------------------------
    def _sent_args(self, call: Call[McpConnection]) -> dict[str, JSON]:
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
        instruction = user_instruction(call.operation, call.args, call.ctx.extension)
        return {**call.args, INSTRUCTION_FIELD: instruction}

    def _preview_of(self, call: Call[McpConnection]) -> Preview | None:
        """The preview a hash-bound write applies, as Helm showed it; ``refused`` without one."""
        if not (call.write and is_hash_bound(call.operation)):
            return None
        digest = call.args.get(HASH_ARG)
        found = (
            self.previews.find(call.ctx.workspace, call.ctx.extension, digest)
            if isinstance(digest, str)
            else None
        )
        if found is not None and call.operation == CANDIDATE_REVIEW:
            found = found if found.tool in CANDIDATE_READS and found.subject == call.args.get("id") else None
        elif found is not None and found.tool != preview_tool(call.operation):
            found = None  # another tool's preview (or a candidate's revision) shows another change
        if found is None:
            what = (
                "read the candidate"
                if call.operation == CANDIDATE_REVIEW
                else "call the matching preview tool"
            )
            raise CallError(
                ErrorCode.REFUSED,
                f"{what} through Helm first, and send the hash it returned as expected_sha256",
            )
        return found

    def _remember(self, call: Call[McpConnection], envelope: Mapping[str, Any]) -> None:
        """Keep a preview's hash and text, so an apply (in any Helm process) can show it."""
        data = envelope.get("data")
        if not envelope.get("ok") or not isinstance(data, dict):
            return
        if call.operation in CANDIDATE_READS:
            digest, subject, text = data.get("revision"), data.get("id"), data.get("markdown")
        elif call.operation.endswith("_preview"):
            digest, subject = data.get(PROPOSAL_FIELD), None
            text = json.dumps(data, ensure_ascii=False, indent=2)
        else:
            return
        if not (isinstance(digest, str) and isinstance(text, str)):
            return
        if subject is not None and not isinstance(subject, str):
            return
        preview = Preview(digest, call.operation, subject, shown_text(text), time.time())
        try:
            self.previews.remember(call.ctx.workspace, call.ctx.extension, preview)
        except OSError as exc:  # HomeWriteError included: a full disk, a read-only home
            # The read itself succeeded; only a later apply of it will be refused.
            log.warning("could not keep a TDT preview: %s", exc.strerror or type(exc).__name__)

    # -- the Kind protocol -----------------------------------------------------------------
    async def pin(self, workspace: Workspace, conn: McpConnection) -> Mapping[str, JSON]:
        return {}  # the workspace's own TDT: its tools are Helm's known catalogue, not pinned

    async def describe(self, call: Call[McpConnection]) -> WriteDetails:
        sent = self._sent_args(call)
        preview = await asyncio.to_thread(self._preview_of, call)
        fields = [
            ("Action", action(call.operation, call.args)),
            ("MCP server", LABEL),
            ("Tool", call.operation),
            ("Arguments", wire_args(sent)),
        ]
        if preview is not None:
            fields.append(("Preview", f"from {preview.tool}, hash {preview.hash}"))
        return TDT.confirm.details(
            fields=tuple(fields),
            request=f"{call.operation} {wire_args(sent)}",
            binding={"server": "tdt", "tool": call.operation, "args": sent},
            diff=None if preview is None else preview.text,
        )

    async def execute(self, call: Call[McpConnection]) -> dict[str, JSON]:
        sent = self._sent_args(call)
        if call.write:
            await asyncio.to_thread(self._preview_of, call)
        envelope = await self._call_tool(call.workspace, call.operation, sent)
        if not call.write:
            await asyncio.to_thread(self._remember, call, envelope)
        return envelope

    async def aclose(self) -> None:
        async with self._lock:
            children, self._children = [*self._children.values(), *self._draining], {}
        for child in children:
            self._close_later(child)
        while pending := [t for t in self._closing if not t.done()]:
            await asyncio.wait(pending)
