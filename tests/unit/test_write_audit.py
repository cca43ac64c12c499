"""A confirmed write is recorded before it is sent: when the audit log cannot be written, the
write is not sent and the caller gets an envelope (the broker never raises for it).

Real failures of a real file system: a full disk (the audit log is ``/dev/full``), a read-only
home (a read-only bind mount as root, which ignores file modes; the folder's mode otherwise),
and an audit path that cannot be a file (a folder stands in its place).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from broker import Broker, CallContext, Decision
from tests.helpers import ScriptedConfirmer, manifest_dict, new_broker, setup_extension

NOTES = {
    "id": "notes",
    "kind": "files",
    "root": "workspace",
    "paths": ["notes/*.md"],
    "operations": ["list", "read", "write"],
}


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` cannot be written while inside, not even by root."""
    if os.geteuid() == 0:
        subprocess.run(["mount", "--bind", "-o", "ro", str(folder), str(folder)], check=True)
        try:
            yield
        finally:
            subprocess.run(["umount", str(folder)], check=True)
    else:
        folder.chmod(0o500)
        try:
            yield
        finally:
            folder.chmod(0o700)


def full_disk(home: Path) -> contextlib.AbstractContextManager[None]:
    audit = home / "audit.jsonl"
    audit.unlink(missing_ok=True)
    audit.symlink_to("/dev/full")  # every write to it fails with ENOSPC
    return contextlib.nullcontext()


def audit_is_a_folder(home: Path) -> contextlib.AbstractContextManager[None]:
    audit = home / "audit.jsonl"
    audit.unlink(missing_ok=True)
    audit.mkdir()
    return contextlib.nullcontext()


FAILURES = {
    "full-disk": full_disk,
    "read-only-home": read_only,
    "unwritable-audit-path": audit_is_a_folder,
}


@pytest.fixture
async def broker(tmp_path: Path) -> Any:
    async with new_broker(tmp_path / "home") as b:
        yield b


@pytest.fixture
async def ctx(broker: Broker, tmp_path: Path) -> CallContext:
    ctx = await setup_extension(broker, tmp_path, manifest_dict([NOTES], write=True))
    (tmp_path / "root" / "notes").mkdir()
    (tmp_path / "root" / "notes" / "a.md").write_text("hello\n")
    return ctx


def args() -> dict[str, Any]:
    return {
        "path": "notes/a.md",
        "text": "changed\n",
        "expected_sha256": hashlib.sha256(b"hello\n").hexdigest(),
    }


@pytest.mark.parametrize("failure", FAILURES)
async def test_a_confirmed_write_whose_decision_cannot_be_audited_is_not_sent_and_answers_an_envelope(
    broker: Broker, ctx: CallContext, tmp_path: Path, failure: str
) -> None:
    confirm = ScriptedConfirmer(Decision.CONFIRMED)
    with FAILURES[failure](broker.home.path):
        text = await broker.request_json(ctx, "notes", "write", json.dumps(args()), confirm)
        result = await broker.request(ctx, "notes", "write", args(), confirm)
    assert len(confirm.shown) == 2  # the user confirmed both
    for answer in (json.loads(text), result):
        assert answer["ok"] is False
        assert answer["error"]["code"] == "unavailable"
        assert "audit log" in answer["error"]["message"] and "nothing was sent" in answer["error"]["message"]
    assert (tmp_path / "root" / "notes" / "a.md").read_text() == "hello\n"


@pytest.mark.parametrize("failure", FAILURES)
async def test_a_declined_write_still_answers_declined_when_the_audit_log_cannot_be_written(
    broker: Broker, ctx: CallContext, tmp_path: Path, failure: str
) -> None:
    with FAILURES[failure](broker.home.path):
        text = await broker.request_json(
            ctx, "notes", "write", json.dumps(args()), ScriptedConfirmer(Decision.DECLINED)
        )
    assert json.loads(text)["error"]["code"] == "declined"
    assert (tmp_path / "root" / "notes" / "a.md").read_text() == "hello\n"


async def test_the_decision_is_recorded_before_the_write_is_sent(
    broker: Broker, ctx: CallContext, tmp_path: Path
) -> None:
    seen: list[list[tuple[str, str]]] = []
    original = broker.writes._redeemed

    async def spy(target: Any, prepared: Any, token: str, *rest: Any) -> dict[str, Any]:
        send = prepared.send

        async def sending() -> dict[str, Any]:
            seen.append([(r.decision, r.outcome) for r in broker.audit.records()])
            return await send()

        return await original(target, type(prepared)(prepared.details, sending), token, *rest)

    broker.writes._redeemed = spy  # type: ignore[method-assign]
    assert (await broker.request(ctx, "notes", "write", args(), ScriptedConfirmer()))["ok"]
    assert seen == [[("confirmed", "sending")]]
    assert [(r.decision, r.outcome) for r in broker.audit.records()] == [
        ("confirmed", "sending"),
        ("confirmed", "ok"),
    ]
