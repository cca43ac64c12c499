"""Serving ``fs/read_text_file`` and ``fs/write_text_file`` inside the session's roots.

A read is served when the path is inside a root and the guard opens it. A write needs a run
that allows writes; then it goes through the one write pipeline (``broker.writes``) like every
write in Helm: a one-time token bound to the root, path, new content and the file's current
hash, living as long as the session's question may stay open; the user's Confirm on the diff
(the write dialog every Helm write uses); the audit record of the decision before the file is
written and of the outcome after; then the write, done atomically. A decline, a timeout or a
cancelled turn answers the agent with an error and writes nothing (a write whose question is
open when the agent ends is recorded as ``cancelled``). Every read and write is in the audit
log and streamed as a ``FileAccess`` event.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from acp import RequestError, schema

from broker.agents import fsguard
from broker.agents.events import FileAccess, clip
from broker.agents.fsguard import RelPath, Root, refused
from broker.agents.questions import clip_diff
from broker.agents.state import ENDED, SessionState
from broker.context import AgentRequester
from broker.errors import CallError, ErrorCode
from broker.fs.confirm import FILE_CHANGE, FILES_KIND
from broker.fs.diff import line_diff, newline_lines
from broker.summary import Confirmer, Decision, WriteSummary
from broker.writes import Prepared, WriteTarget

WRITE = "fs/write_text_file"

REFUSED = -32001
"""The JSON-RPC error code of Helm's refusals and of a write the user declined."""


def _error(message: str) -> RequestError:
    return RequestError(REFUSED, message)


def _shown(path: object) -> str:
    return clip(path, 300) if isinstance(path, str) else "(not a path)"


def _done(state: SessionState, op: str, path: str, decision: str, outcome: str, message: str = "") -> None:
    state.record(f"fs/{op}_text_file", decision, outcome, title=path)
    state.emit(FileAccess(op, path, decision, outcome, message))


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
        why = state.organisation(False)
        if why is not None:
            raise refused(why)
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


def _target(
    state: SessionState, root: Root, rel: RelPath, data: bytes, current: fsguard.Current | None, text: str
) -> WriteTarget:
    """The write as the one write pipeline takes it: asked by this session, its token living as
    long as the session's question may stay open."""
    path = state.scrub(rel.text)

    async def prepare() -> Prepared:
        old = "" if current is None else current.text
        diff = await asyncio.to_thread(line_diff, rel.text, old, text)
        new = hashlib.sha256(data).hexdigest()
        verb = "Create" if current is None else "Replace"
        details = FILE_CHANGE.details(
            fields=(("Agent", state.profile.name), (root.label, root.name), ("Path", path)),
            request=f"{verb} {path} ({len(data)} bytes, sha256 {new})",
            binding={"root": str(root.folder), "path": rel.text, "sha256": new,
                     "base": None if current is None else current.sha256},
            diff=clip_diff(state.scrub(diff)), file=f"{root.name}/{path}",
        )  # fmt: skip

        async def send() -> dict[str, Any]:
            await asyncio.to_thread(_apply, state, root, rel, data, current)
            return {"ok": True, "data": None, "error": None}

        return Prepared(details, send)

    who = AgentRequester(state.workspace.name, state.profile.name, state.session_id)
    return WriteTarget(who, state.profile.name, WRITE, FILES_KIND, prepare, state.limits.question_timeout)


def _asking(state: SessionState, answers: list[Decision]) -> Confirmer:
    """The session's confirmer, bounded by its question timeout and withdrawn when the turn is
    cancelled or the agent ends; ``answers`` gets how the question ended."""

    async def confirm(summary: WriteSummary) -> Decision:
        asked, decision = await state.ask(state.confirmer(summary))
        if asked is Decision.CONFIRMED and decision is not None:
            answers.append(decision)
        else:
            answers.append(Decision.WITHDRAWN if state.ended.is_set() else asked)
        return answers[-1]

    return confirm


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
        why = state.organisation(True)
        if why is not None:
            raise refused(why)
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
    answers: list[Decision] = []
    try:
        await state.writes.request(_target(state, root, rel, data, current, content), _asking(state, answers))
    except CallError as err:
        decision = answers[-1] if answers else Decision.DECLINED
        if decision is Decision.WITHDRAWN:
            state.emit(FileAccess("write", shown, "cancelled", "declined", ENDED))
            raise _error(f"{ENDED}; nothing was written to {shown}") from None
        if decision is not Decision.CONFIRMED:
            state.emit(FileAccess("write", shown, decision.value, "declined", ""))
            raise _error(
                f"the user did not confirm the change to {shown} ({decision.value}); nothing was written"
            ) from None
        state.emit(FileAccess("write", shown, decision.value, err.code.value, err.message))
        raise _error(f"the write to {shown} failed: {err.message}; nothing was written") from None
    state.emit(FileAccess("write", shown, Decision.CONFIRMED.value, "ok", ""))
    return schema.WriteTextFileResponse()
