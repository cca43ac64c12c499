"""Helm's side of ACP: the SDK's ``Client`` interface, serving the session a connection hosts.

What Helm serves: ``session/update`` (turned into events), ``session/request_permission``
(the policy), ``fs/read_text_file`` and ``fs/write_text_file`` (inside the roots). What it does
not: every ``terminal/*`` method and elicitation are refused with "method not found" — Helm
never advertises them, and an agent that calls them anyway gets no shell and no form (a
``terminal/create`` is streamed as a ``TerminalRefused`` event, so the user sees what it tried).
"""

from __future__ import annotations

import shlex
from typing import Any

from acp import RequestError, schema

from broker.agents.events import TerminalRefused, clip, content_digest, tool_content_text, update_event
from broker.agents.files import serve_read, serve_write
from broker.agents.flow import Flow
from broker.agents.permissions import serve_permission
from broker.agents.state import SessionState, ToolFacts

CLIENT_CAPABILITIES = schema.ClientCapabilities(
    fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True),
    terminal=False,
)
"""What Helm tells an agent it can do: read and write text files through Helm. No terminal:
a shell Helm ran for the agent would bypass the policy."""


class HelmClient:
    """The client half of one connection; ``session`` is the session it serves now."""

    def __init__(self, flow: Flow) -> None:
        self.flow = flow
        self.session: SessionState | None = None

    def _state(self, session_id: str) -> SessionState:
        state = self.session
        if state is None or state.session_id != session_id:
            raise RequestError.invalid_params({"sessionId": "not a session of this client"})
        return state

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        try:
            state = self.session
            if state is None or state.session_id != session_id:
                return
            if isinstance(update, schema.ToolCallStart | schema.ToolCallProgress):
                state.tools.note(update.tool_call_id, _facts(update))
            event = update_event(update)
            if event is not None:
                state.emit(event)
        finally:
            self.flow.update_done()

    async def request_permission(
        self, session_id: str, tool_call: schema.ToolCallUpdate, options: list[Any], **kwargs: Any
    ) -> schema.RequestPermissionResponse:
        return await serve_permission(self._state(session_id), tool_call, options)

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> schema.ReadTextFileResponse:
        return await serve_read(self._state(session_id), path, line, limit)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> schema.WriteTextFileResponse:
        return await serve_write(self._state(session_id), path, content)

    # Never advertised; refused even if asked (the SDK would otherwise answer null).
    async def create_terminal(
        self, session_id: str, command: str, args: list[str] | None = None, **kwargs: Any
    ) -> Any:
        state = self.session
        if state is not None and state.session_id == session_id:  # the transcript says so
            line = clip(shlex.join([command, *(args or [])]), 2000)
            state.emit(TerminalRefused(line))
        raise RequestError.method_not_found("terminal/create")

    async def terminal_output(self, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("terminal/output")

    async def release_terminal(self, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("terminal/release")

    async def wait_for_terminal_exit(self, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("terminal/wait_for_exit")

    async def kill_terminal(self, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("terminal/kill")

    async def create_elicitation(self, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("elicitation/create")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        return None


def _facts(update: schema.ToolCallStart | schema.ToolCallProgress) -> ToolFacts:
    return ToolFacts(
        update.kind or "",
        clip(update.title or "", 500),
        clip(tool_content_text(update.content), 4096),
        tuple(clip(loc.path, 4096) for loc in update.locations or []),
        content_digest(update.content),
    )
