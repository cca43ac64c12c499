"""The activity hook and the kill switch, on the real broker with real extensions and calls."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from broker import AppInstance, Broker, CallContext
from broker.activity import Activity, ActivityRecord
from broker.errors import SettingsError
from tests.helpers import WaitingConfirmer, manifest_dict, new_broker, setup_extension
from tests.servers.services import HttpServer
from tests.unit.kinds.http_setup import service_extension

FILES = {
    "id": "notes",
    "kind": "files",
    "root": "workspace",
    "paths": ["notes/*.md"],
    "operations": ["list", "read", "write"],
}
OTHER = {**FILES, "id": "drafts"}
HELLO_SHA = hashlib.sha256(b"hello\n").hexdigest()
SECRET_ARGUMENT = "notes/private-diary-7c1d.md"


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    async with new_broker(tmp_path / "home") as b:
        yield b


@pytest.fixture
async def ctx(broker: Broker, tmp_path: Path) -> CallContext:
    ctx = await setup_extension(broker, tmp_path, manifest_dict([FILES, OTHER], write=True))
    (tmp_path / "root" / "notes").mkdir()
    (tmp_path / "root" / "notes" / "a.md").write_text("hello\n", encoding="utf-8")
    return ctx


def heard(broker: Broker) -> list[ActivityRecord]:
    records: list[ActivityRecord] = []
    broker.activity.subscribe(records.append)
    return records


def code(result: dict[str, Any]) -> str | None:
    return None if result["ok"] else result["error"]["code"]


async def test_the_record_says_who_called_in_memory_and_on_disk(
    broker: Broker, ctx: CallContext, tmp_path: Path
) -> None:
    records = heard(broker)
    app = CallContext.of(AppInstance(ctx.workspace, ctx.extension, "app-1"))
    await broker.call(ctx, "notes", "list", {})
    await broker.call(app, "notes", "list", {})
    assert [(r.requester, r.instance) for r in records] == [("extension", ctx.instance), ("app", "app-1")]
    broker.activity.flush()
    lines = (tmp_path / "home" / "activity.jsonl").read_text("utf-8").splitlines()
    assert [json.loads(line)["requester"] for line in lines] == ["extension", "app"]
    again = [ActivityRecord.from_json(json.loads(line)) for line in lines]
    assert [r.requester for r in again if r is not None] == ["extension", "app"]


async def test_every_call_is_recorded_with_outcome_duration_and_bytes_but_no_argument_value(
    broker: Broker, ctx: CallContext, tmp_path: Path
) -> None:
    records = heard(broker)
    ok = await broker.call(ctx, "notes", "read", {"path": "notes/a.md"})
    missing = await broker.call(ctx, "notes", "read", {"path": SECRET_ARGUMENT})
    undeclared = await broker.call(ctx, "nowhere", "read", {})
    assert [r.outcome for r in records] == ["ok", code(missing), "refused"]
    assert code(undeclared) == "refused"
    first = records[0]
    assert (first.workspace, first.extension, first.instance) == (ctx.workspace, ctx.extension, ctx.instance)
    assert (first.connection, first.operation) == ("notes", "read")
    assert first.bytes == len(json.dumps(ok, ensure_ascii=False, separators=(",", ":")).encode())
    assert first.duration_ms > 0
    assert list(broker.activity.recent) == records
    broker.activity.flush()
    text = (tmp_path / "home" / "activity.jsonl").read_text("utf-8")
    assert len(text.splitlines()) == 3
    assert SECRET_ARGUMENT not in text and "hello" not in text
    assert (tmp_path / "home" / "activity.jsonl").stat().st_mode & 0o777 == 0o600
    assert broker.activity.history() == records
    later = Activity(tmp_path / "home")  # the next run of Helm reads them from disk
    assert later.history() == [ActivityRecord.from_json(json.loads(r.line())) for r in records]
    assert [r.message for r in later.history()] == ["", "", ""]
    count = broker.activity.counts[(ctx.workspace, ctx.extension)]
    assert (count.calls, count.failed) == (3, 2)


async def test_the_call_does_not_wait_for_the_disk_and_closing_the_broker_writes_the_log(
    tmp_path: Path,
) -> None:
    log = tmp_path / "home" / "activity.jsonl"
    async with new_broker(tmp_path / "home") as broker:
        ctx = await setup_extension(broker, tmp_path, manifest_dict([FILES], write=True))
        await broker.call(ctx, "notes", "list", {})
        assert not log.exists()  # written in a batch, after the call
    assert json.loads(log.read_text("utf-8"))["operation"] == "list"


async def test_memory_and_disk_stay_bounded_however_many_calls(
    broker: Broker, ctx: CallContext, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    broker.activity = Activity(home, keep=10, max_file_bytes=2000)
    for batch in range(15):
        for _ in range(4):
            await broker.call(CallContext(ctx.workspace, ctx.extension, f"i{batch}"), "notes", "list", {})
        broker.activity.flush()
    assert len(broker.activity.recent) == 10
    files = sorted(p.name for p in home.glob("activity*.jsonl"))
    assert files == ["activity.1.jsonl", "activity.jsonl"]
    assert all((home / f).stat().st_size <= 2000 for f in files)
    history = Activity(home).history()
    assert 0 < len(history) < 60
    assert [r.time for r in history] == sorted(r.time for r in history)  # oldest first, both files


async def test_a_torn_last_line_is_skipped_and_the_rest_reads(
    broker: Broker, ctx: CallContext, tmp_path: Path
) -> None:
    await broker.call(ctx, "notes", "list", {})
    broker.activity.flush()
    with (tmp_path / "home" / "activity.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"time": "2026-01-0')
    assert [r.operation for r in Activity(tmp_path / "home").history()] == ["list"]


async def test_a_stopped_extension_is_refused_saying_the_user_stopped_it_until_turned_back_on(
    broker: Broker, ctx: CallContext, tmp_path: Path
) -> None:
    broker.activity.stop(ctx.workspace, ctx.extension)
    refused = await broker.call(ctx, "notes", "list", {})
    assert code(refused) == "refused"
    assert "the user stopped com.example.test in Helm; nothing was sent" in refused["error"]["message"]
    assert broker.activity.recent[-1].outcome == "refused"
    async with new_broker(tmp_path / "home") as later:  # a stop outlives a restart
        assert code(await later.call(ctx, "notes", "list", {})) == "refused"
    broker.activity.resume(ctx.workspace, ctx.extension)
    assert (await broker.call(ctx, "notes", "list", {}))["ok"]


async def test_a_stopped_connection_is_refused_and_the_extensions_other_connections_still_work(
    broker: Broker, ctx: CallContext
) -> None:
    broker.activity.stop(ctx.workspace, ctx.extension, "notes")
    refused = await broker.call(ctx, "notes", "list", {})
    assert "the user stopped connection 'notes' of com.example.test" in refused["error"]["message"]
    assert (await broker.call(ctx, "drafts", "list", {}))["ok"]
    other = CallContext("other", ctx.extension, ctx.instance)
    assert "stopped" not in str((await broker.call(other, "notes", "list", {}))["error"])
    assert broker.activity.switch.is_stopped(ctx.workspace, ctx.extension, "notes")
    assert not broker.activity.switch.is_stopped(ctx.workspace, ctx.extension)


async def test_a_damaged_stop_file_refuses_every_call_and_is_never_overwritten(
    broker: Broker, ctx: CallContext, tmp_path: Path
) -> None:
    damaged = tmp_path / "home" / "stopped.json"
    damaged.write_text("{not json", encoding="utf-8")
    result = await broker.call(ctx, "notes", "list", {})
    assert code(result) == "refused"
    assert "stopped.json in Helm's home is damaged" in result["error"]["message"]
    with pytest.raises(SettingsError, match="left as it is"):
        broker.activity.resume(ctx.workspace, ctx.extension)
    assert damaged.read_text("utf-8") == "{not json"


async def test_stopping_cancels_a_read_that_is_waiting_for_a_slow_server(
    broker: Broker, tmp_path: Path, httpbin_server: HttpServer
) -> None:
    calls = {"slow": {"method": "GET", "path": "/delay/10"}}
    ctx = await service_extension(broker, tmp_path, httpbin_server.url, calls)
    call = asyncio.create_task(broker.call(ctx, "api", "slow", {}))
    async with asyncio.timeout(5):
        while broker.activity.running(ctx.workspace, ctx.extension) == 0:
            await asyncio.sleep(0)
    assert broker.activity.stop(ctx.workspace, ctx.extension, "api") == 1
    result = await asyncio.wait_for(call, 5)  # far sooner than the server's 10 s
    assert code(result) == "refused"
    assert "while this call was running; Helm cancelled it" in result["error"]["message"]
    assert broker.activity.recent[-1].outcome == "refused"
    assert broker.activity.running(ctx.workspace, ctx.extension) == 0


async def test_stopping_cancels_a_write_waiting_for_its_dialog_and_the_audit_log_says_so(
    broker: Broker, ctx: CallContext
) -> None:
    user = WaitingConfirmer()
    args = {"path": "notes/a.md", "text": "changed\n", "expected_sha256": HELLO_SHA}
    call = asyncio.create_task(broker.request(ctx, "notes", "write", args, user))
    await asyncio.wait_for(user.asked.wait(), 5)
    broker.activity.stop(ctx.workspace, ctx.extension)
    result = await asyncio.wait_for(call, 5)
    assert code(result) == "refused"
    last = list(broker.audit.records())[-1]
    assert (last.decision, last.outcome) == ("cancelled", "nothing sent")
    assert last.fields == ("Workspace", "Path")
    assert "changed" not in broker.audit.path.read_text("utf-8")


async def test_a_call_cancelled_by_its_caller_stays_cancelled_and_is_recorded(
    broker: Broker, ctx: CallContext
) -> None:
    user = WaitingConfirmer()
    call = asyncio.create_task(
        broker.request(
            ctx, "notes", "write", {"path": "notes/a.md", "text": "x", "expected_sha256": HELLO_SHA}, user
        )
    )
    await asyncio.wait_for(user.asked.wait(), 5)
    call.cancel()  # the frame closed
    with pytest.raises(asyncio.CancelledError):
        await call
    assert broker.activity.recent[-1].outcome == "cancelled"
