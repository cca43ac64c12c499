"""Serving ``fs/read_text_file`` and ``fs/write_text_file`` inside the session's roots.

A read is served when the path is inside a root and the guard opens it. A write needs a run
that allows writes, then the user's Confirm on the diff (the write dialog every Helm write
uses), then it is done atomically; a decline, a timeout or a cancelled turn answers the agent
with an error and writes nothing (a write whose question is open when the agent ends is recorded
as ``cancelled``). Every read and write is in the audit log and streamed as a ``FileAccess``
event.
"""

from __future__ import annotations

import asyncio
import hashlib

from acp import RequestError, schema

from broker.agents import fsguard
from broker.agents.events import FileAccess, clip
from broker.agents.fsguard import RelPath, Root, refused
from broker.agents.questions import agent_write_summary
from broker.agents.state import ENDED, SessionState, new_decision_id
from broker.errors import CallError, ErrorCode
from broker.kinds.files.diff import line_diff, newline_lines
from broker.summary import Decision

REFUSED = -32001
"""The JSON-RPC error code of Helm's refusals and of a write the user declined."""


def _error(message: str) -> RequestError:
    return RequestError(REFUSED, message)


def _shown(path: object) -> str:
    return clip(path, 300) if isinstance(path, str) else "(not a path)"


def _done(state: SessionState, op: str, path: str, decision: str, outcome: str, message: str = "") -> None:
    state.record(f"fs/{op}_text_file", decision, outcome, title=path)
    state.push(FileAccess(op, path, decision, outcome, message))


def _lines(text: str, line: int | None, limit: int | None) -> str:
    if line is None and limit is None:
        return text
    rows = newline_lines(text)
    start = max((line or 1) - 1, 0)
    end = len(rows) if limit is None else start + max(limit, 0)
    return "".join(rows[start:end])


async def serve_read(
    state: SessionState, path: str, line: int | None, limit: int | None
) -> schema.ReadTextFileResponse:
    shown = _shown(path)
    try:
        root, rel = fsguard.locate(path, state.roots)
        text = await asyncio.to_thread(fsguard.read_text, root, rel, state.home)
    except CallError as err:
        _done(state, "read", shown, "refused", err.code.value, err.message)
        raise _error(f"Helm refused to read {shown}: {err.message}") from None
    _done(state, "read", shown, "allowed", "ok")
    return schema.ReadTextFileResponse(content=_lines(text, line, limit))


def _encode(content: str) -> bytes:
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        raise refused("the content is not valid Unicode text") from None
    if len(data) > fsguard.MAX_FILE_BYTES:
        raise CallError(ErrorCode.TOO_LARGE, "the content is larger than 256 KiB")
    return data


async def _confirm(
    state: SessionState, root: Root, rel: RelPath, data: bytes, current: fsguard.Current | None, text: str
) -> Decision:
    old = "" if current is None else current.text
    diff = await asyncio.to_thread(line_diff, rel.text, old, text)
    summary = agent_write_summary(
        decision_id=new_decision_id(), agent=state.profile.name, workspace=state.workspace.name,
        root=f"{root.label} {root.name}", path=rel.text, data=data, diff=state.scrub(diff),
        created=current is None,
    )  # fmt: skip
    asked, decision = await state.ask(state.confirmer(summary))
    return decision if asked is Decision.CONFIRMED and decision is not None else asked


def _apply(
    state: SessionState, root: Root, rel: RelPath, data: bytes, current: fsguard.Current | None
) -> None:
    if current is None:
        fsguard.create_file(root, rel, data, state.home)
    else:
        fsguard.write_file(root, rel, data, current.sha256, state.home)


async def serve_write(state: SessionState, path: str, content: str) -> schema.WriteTextFileResponse:
    with state.asking():
        return await _serve_write(state, path, content)


async def _serve_write(state: SessionState, path: str, content: str) -> schema.WriteTextFileResponse:
    shown = _shown(path)
    try:
        if not state.rules.write:
            raise refused("this run does not allow changes to files")
        root, rel = fsguard.locate(path, state.roots)
        data = _encode(content)
        current = await asyncio.to_thread(fsguard.current_text, root, rel, state.home)
    except CallError as err:
        _done(state, "write", shown, "refused", err.code.value, err.message)
        raise _error(f"Helm refused to write {shown}: {err.message}") from None
    if current is not None and current.sha256 == hashlib.sha256(data).hexdigest():
        _done(state, "write", shown, "unchanged", "ok")
        return schema.WriteTextFileResponse()
    decision = await _confirm(state, root, rel, data, current, content)
    if decision is not Decision.CONFIRMED and state.ended.is_set():
        _done(state, "write", shown, "cancelled", "declined", ENDED)
        raise _error(f"{ENDED}; nothing was written to {shown}")
    if decision is not Decision.CONFIRMED:
        _done(state, "write", shown, decision.value, "declined")
        raise _error(
            f"the user did not confirm the change to {shown} ({decision.value}); nothing was written"
        )
    try:
        await asyncio.to_thread(_apply, state, root, rel, data, current)
    except CallError as err:
        _done(state, "write", shown, decision.value, err.code.value, err.message)
        raise _error(f"the write to {shown} failed: {err.message}; nothing was written") from None
    _done(state, "write", shown, decision.value, "ok")
    return schema.WriteTextFileResponse()
