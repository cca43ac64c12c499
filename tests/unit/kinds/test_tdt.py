"""The tdt-mcp kind against the real TDT (PyPI thisdamnthing[mcp], its own venv) in real TDT
workspaces: the envelope unchanged, Helm's errors in it, everyday writes with the dialog's
instruction, preview → show → apply, stale revisions, the child's command line and its life."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import signal
import struct
import termios
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from broker import Broker, CallContext, Decision
from broker.kinds.mcp.tdt import command_for
from broker.kinds.mcp.tdt_actions import user_instruction
from broker.mcp.session import McpLimits
from broker.workspaces import add_workspace, set_everyday, set_tdt_command
from tests.helpers import ScriptedConfirmer, manifest_dict, new_broker, setup_extension
from tests.servers.tdt import TdtWorkspace
from tests.unit.kinds.mcp_setup import use_limits

READS = [
    "tdt_workspace_status", "tdt_workspace_context", "tdt_reminder_list", "tdt_reminder_read",
    "tdt_brain_search", "tdt_brain_names_preview", "tdt_brain_names_status", "tdt_candidate_list",
    "tdt_candidate_read", "tdt_candidate_review_status",
]  # fmt: skip
WRITES = ["tdt_brain_names_apply", "tdt_candidate_review", "tdt_reminder_create", "tdt_reminder_complete",
          "tdt_reminder_snooze"]  # fmt: skip
TDT_KEYS = {"api_version", "ok", "data", "coverage", "warnings", "error"}
ROOMY = McpLimits(call_timeout=30.0, start_timeout=60.0, cancel_grace=1.0)
"""The real TDT takes seconds to start on a loaded machine; its calls answer in milliseconds."""


@pytest.fixture(autouse=True)
def roomy_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    use_limits(monkeypatch, ROOMY)


async def tdt_extension(
    broker: Broker,
    tmp_path: Path,
    space: TdtWorkspace,
    program: list[str] | None,
    *,
    everyday: bool = True,
    ext: str = "com.example.test",
    workspace: str = "ws",
) -> CallContext:
    if workspace not in broker.home.settings().workspaces:
        add_workspace(broker.home, workspace, space.root)
    conn: dict[str, Any] = {"id": "tdt", "kind": "tdt-mcp", "operations": READS, "writes": WRITES}
    manifest = manifest_dict([conn], write=True, id=ext)
    ctx = await setup_extension(broker, tmp_path / ext, manifest, workspace=workspace)
    set_tdt_command(broker.home, workspace, program)
    set_everyday(broker.home, workspace, everyday)
    return ctx


def tdt_children(root: Path) -> list[int]:
    """The pids of live TDT servers bound to ``root`` (read from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and b"serve" in argv and str(root).encode() in argv:
            found.append(int(entry))
    return found


def queued_bytes(pid: int) -> int:
    """How many bytes wait unread in the stdin pipe of process ``pid``."""
    fd = os.open(f"/proc/{pid}/fd/0", os.O_RDONLY | os.O_NONBLOCK)
    try:
        return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
    finally:
        os.close(fd)


def stopped(pid: int) -> bool:
    """Whether every thread of process ``pid`` has stopped (after SIGSTOP)."""
    tasks = Path(f"/proc/{pid}/task")
    return all((t / "stat").read_text().rsplit(")", 1)[1].split()[0] == "T" for t in tasks.iterdir())


async def until(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Wait for ``condition`` (checked every 10 ms), failing after ``timeout`` seconds."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def test_reads_pass_the_tdt_envelope_through_unchanged(
    tmp_path: Path, tdt_workspace: TdtWorkspace, tdt_program: list[str]
):
    async with new_broker(tmp_path / "home") as broker:
        ctx = await tdt_extension(broker, tmp_path, tdt_workspace, tdt_program, everyday=False)
        status = await broker.call(ctx, "tdt", "tdt_workspace_status", {})
        reminders = await broker.call(ctx, "tdt", "tdt_reminder_list", {})
        refused = await broker.call(ctx, "tdt", "tdt_reminder_read", {"id": "not-an-id"})
    assert set(status) == TDT_KEYS
    assert status["api_version"] == 1 and status["ok"] is True and status["error"] is None
    assert status["coverage"] == {"truncated": False, "omissions": []}
    assert (status["data"]["pending_candidates"], status["data"]["projects_total"]) == (1, 1)
    assert [r["id"] for r in reminders["data"]["items"]] == [tdt_workspace.reminder]
    assert refused == {  # TDT's own refusal, exactly as TDT wrote it
        "api_version": 1,
        "ok": False,
        "data": None,
        "coverage": {"truncated": False, "omissions": []},
        "warnings": [],
        "error": {
            "code": "invalid_input",
            "message": "Arguments do not match the tool input schema",
            "retry": "reread",
        },
    }


async def test_helms_own_errors_have_exactly_the_keys_of_tdts(
    tmp_path: Path, tdt_workspace: TdtWorkspace, tdt_program: list[str]
):
    async with new_broker(tmp_path / "home") as broker:
        ctx = await tdt_extension(broker, tmp_path, tdt_workspace, tdt_program, everyday=False)
        tdts = await broker.call(ctx, "tdt", "tdt_reminder_read", {"id": "x"})
        undeclared = await broker.call(ctx, "tdt", "tdt_project_list", {})
        confirmer = ScriptedConfirmer()
        no_everyday = await broker.request(ctx, "tdt", "tdt_reminder_create", {"title": "x"}, confirmer)
    for helms in (undeclared, no_everyday):
        assert set(helms) == set(tdts)
        assert set(helms["error"]) == set(tdts["error"])
        assert helms["api_version"] == 1
        assert helms["coverage"] == tdts["coverage"] and helms["warnings"] == []
        assert (helms["error"]["code"], helms["error"]["retry"]) == ("refused", "reread")
    assert "everyday" in no_everyday["error"]["message"]
    assert confirmer.shown == []  # refused before any dialog


def test_the_command_line_is_the_program_then_what_helm_adds(tmp_path: Path):
    async def run() -> tuple[list[str], list[str], list[str], list[str]]:
        async with new_broker(tmp_path / "home") as broker:
            add_workspace(broker.home, "ws", tmp_path)
            default = command_for(broker.home.settings().workspace("ws"))
            set_tdt_command(broker.home, "ws", ["uvx", "--from", "thisdamnthing[mcp]", "tdt"])
            set_everyday(broker.home, "ws", True)
            wrapped = command_for(broker.home.settings().workspace("ws"))
            set_tdt_command(broker.home, "ws", ["/opt/tdt", "mcp", "serve"])  # an older Helm's
            older = command_for(broker.home.settings().workspace("ws"))
            set_tdt_command(broker.home, "ws", ["mcp", "serve"])  # a program named mcp: kept
            odd = command_for(broker.home.settings().workspace("ws"))
        return default, wrapped, older, odd

    default, wrapped, older, odd = asyncio.run(run())
    tail = ["--workspace", str(tmp_path), "mcp", "serve", "--profile"]
    assert default == ["tdt", *tail, "read-only"]
    assert wrapped == ["uvx", "--from", "thisdamnthing[mcp]", "tdt", *tail, "everyday"]
    assert older == ["/opt/tdt", *tail, "everyday"]
    assert odd == ["mcp", "serve", *tail, "everyday"]


async def test_no_tdt_on_path_is_unavailable_naming_tdt(
    tmp_path: Path, tdt_workspace: TdtWorkspace, monkeypatch: pytest.MonkeyPatch
):
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    async with new_broker(tmp_path / "home") as broker:
        ctx = await tdt_extension(broker, tmp_path, tdt_workspace, None, everyday=False)
        result = await broker.call(ctx, "tdt", "tdt_workspace_status", {})
    assert set(result) == TDT_KEYS
    assert (result["error"]["code"], result["error"]["retry"]) == ("unavailable", "safe")
    assert "is tdt installed" in result["error"]["message"]
    assert "helm workspace tdt-command" in result["error"]["message"]


async def test_tdt_on_path_is_found_without_a_command(
    tmp_path: Path, tdt_workspace: TdtWorkspace, tdt_program: list[str], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("PATH", f"{Path(tdt_program[0]).parent}{os.pathsep}{os.environ['PATH']}")
    async with new_broker(tmp_path / "home") as broker:
        ctx = await tdt_extension(broker, tmp_path, tdt_workspace, None, everyday=False)
        result = await broker.call(ctx, "tdt", "tdt_workspace_context", {})
    assert result["ok"] is True
    assert result["data"]["profile"] == "read-only"


async def test_an_everyday_write_carries_the_instruction_the_dialog_showed(
    tmp_path: Path, tdt_workspace: TdtWorkspace, tdt_program: list[str]
):
    reminder = {"title": "Call the plumber", "body": "About the sink", "due_at": "2031-05-01T10:00:00+00:00",
                "timezone": "UTC"}  # fmt: skip
    async with new_broker(tmp_path / "home") as broker:
        ctx = await tdt_extension(broker, tmp_path, tdt_workspace, tdt_program)
        confirmer = ScriptedConfirmer()
        created = await broker.request(ctx, "tdt", "tdt_reminder_create", reminder, confirmer)
        read = await broker.call(ctx, "tdt", "tdt_reminder_read", {"reference": created["data"]["id"]})
    shown = dict(confirmer.shown[0].fields)
    assert shown["Action"] == "Create reminder “Call the plumber” due 2031-05-01T10:00:00+00:00"
    instruction = user_instruction("tdt_reminder_create", reminder, ctx.extension)
    assert instruction == f"User confirmed in Helm: {shown['Action']} (asked by com.example.test)"
    assert instruction in confirmer.shown[0].request
    assert created["ok"] is True and created["data"]["result"] == "saved"
    stored = read["data"]["markdown"]
    assert json.dumps(instruction) in stored or json.dumps(instruction, ensure_ascii=False) in stored


async def test_a_stale_revision_is_tdts_refusal_unchanged_and_never_retried(
    tmp_path: Path, tdt_workspace: TdtWorkspace, tdt_program: list[str]
):
    rid = tdt_workspace.reminder
    async with new_broker(tmp_path / "home") as broker:
        ctx = await tdt_extension(broker, tmp_path, tdt_workspace, tdt_program)
        snooze = {"id": rid, "reminder_revision": 1, "changes": {"due_at": "2032-01-01T09:00:00+00:00"}}
        snoozed = await broker.request(ctx, "tdt", "tdt_reminder_snooze", snooze, ScriptedConfirmer())
        stale = {"id": rid, "reminder_revision": 1}
        refused = await broker.request(ctx, "tdt", "tdt_reminder_complete", stale, ScriptedConfirmer())
        after = await broker.call(ctx, "tdt", "tdt_reminder_read", {"reference": rid})
        sent = [(r.operation, r.outcome) for r in broker.audit.records() if r.decision == "confirmed"]
    assert snoozed["data"]["reminder_revision"] == 2
    assert refused == {
        "api_version": 1,
        "ok": False,
        "data": None,
        "coverage": {"truncated": False, "omissions": []},
        "warnings": [],
        "error": {
            "code": "stale_revision",
            "message": "Reminder changed; reread before editing",
            "retry": "reread",
        },
    }
    assert (after["data"]["status"], after["data"]["reminder_revision"]) == ("pending", 2)
    assert [op for op, outcome in sent if outcome == "sending"] == [
        "tdt_reminder_snooze",
        "tdt_reminder_complete",
    ]


async def test_preview_show_apply_shows_the_preview_and_applies_it(
    tmp_path: Path, tdt_workspace: TdtWorkspace, tdt_program: list[str]
):
    async with new_broker(tmp_path / "home") as broker:
        ctx = await tdt_extension(broker, tmp_path, tdt_workspace, tdt_program)
        preview = await broker.call(ctx, "tdt", "tdt_brain_names_preview", {})
        proposal = preview["data"]["proposal_sha256"]
        confirmer = ScriptedConfirmer()
        applied = await broker.request(
            ctx, "tdt", "tdt_brain_names_apply", {"expected_sha256": proposal}, confirmer
        )
        status = await broker.call(ctx, "tdt", "tdt_brain_names_status", {"proposal_sha256": proposal})
    shown = confirmer.shown[0]
    assert shown.diff is not None and f"brain/knowledge/{tdt_workspace.legacy_note}" in shown.diff
    assert dict(shown.fields)["Preview"] == f"from tdt_brain_names_preview, hash {proposal}"
    assert applied["ok"] is True and applied["data"]["status"] == "completed"
    assert status["data"]["status"] == "completed"
    assert not (tdt_workspace.root / "brain" / "knowledge" / tdt_workspace.legacy_note).exists()
    previews = tmp_path / "home" / "tdt-previews"
    assert previews.stat().st_mode & 0o777 == 0o700
    assert {f.stat().st_mode & 0o777 for f in previews.glob("*.json")} == {0o600}


async def test_an_apply_with_a_hash_no_preview_returned_is_refused(
    tmp_path: Path, tdt_workspace: TdtWorkspace, tdt_program: list[str]
):
    async with new_broker(tmp_path / "home") as broker:
        ctx = await tdt_extension(broker, tmp_path, tdt_workspace, tdt_program)
        other = await tdt_extension(broker, tmp_path, tdt_workspace, tdt_program, ext="com.example.other")
        preview = await broker.call(other, "tdt", "tdt_brain_names_preview", {})
        confirmer = ScriptedConfirmer()
        guessed = await broker.request(
            ctx, "tdt", "tdt_brain_names_apply", {"expected_sha256": "0" * 64}, confirmer
        )
        borrowed = {"expected_sha256": preview["data"]["proposal_sha256"]}  # another extension's
        theirs = await broker.request(ctx, "tdt", "tdt_brain_names_apply", borrowed, confirmer)
        status = await broker.call(ctx, "tdt", "tdt_brain_names_status", {"proposal_sha256": "0" * 64})
        via_status = await broker.request(
            ctx, "tdt", "tdt_brain_names_apply", {"expected_sha256": "0" * 64}, confirmer
        )
        candidate = await broker.call(
            ctx, "tdt", "tdt_candidate_read", {"reference": tdt_workspace.candidate}
        )
        revision = {"expected_sha256": candidate["data"]["revision"]}  # another tool's hash
        other_tool = await broker.request(ctx, "tdt", "tdt_brain_names_apply", revision, confirmer)
    for refused in (guessed, theirs, via_status, other_tool):
        assert (refused["error"]["code"], refused["error"]["retry"]) == ("refused", "reread")
    assert status["ok"] is True  # a status read returns the hash it was asked about: no preview
    assert confirmer.shown == []
    assert (tdt_workspace.root / "brain" / "knowledge" / tdt_workspace.legacy_note).exists()


async def test_candidate_review_applies_to_the_candidate_the_dialog_showed(
    tmp_path: Path, tdt_workspace: TdtWorkspace, tdt_program: list[str]
):
    cid = tdt_workspace.candidate
    async with new_broker(tmp_path / "home") as broker:
        ctx = await tdt_extension(broker, tmp_path, tdt_workspace, tdt_program)
        unread = {"id": cid, "expected_sha256": "0" * 64, "decision": {"action": "approve"}}
        before_read = await broker.request(ctx, "tdt", "tdt_candidate_review", unread, ScriptedConfirmer())
        read = await broker.call(ctx, "tdt", "tdt_candidate_read", {"reference": cid})
        review = {"id": cid, "expected_sha256": read["data"]["revision"], "decision": {"action": "approve"}}
        confirmer = ScriptedConfirmer()
        reviewed = await broker.request(ctx, "tdt", "tdt_candidate_review", review, confirmer)
        status = await broker.call(ctx, "tdt", "tdt_candidate_review_status", {"id": cid})
    assert before_read["error"]["code"] == "refused"
    shown = confirmer.shown[0]
    assert dict(shown.fields)["Action"] == f"Approve candidate {cid}"
    assert shown.diff == read["data"]["markdown"]
    assert reviewed["data"] == {"id": cid, "status": "approved"}
    assert status["data"]["status"] == "approved"
    assert f"User confirmed in Helm: Approve candidate {cid}" in status["data"]["markdown"]


async def test_a_declined_or_unconfirmed_apply_sends_nothing(
    tmp_path: Path, tdt_workspace: TdtWorkspace, tdt_program: list[str]
):
    async with new_broker(tmp_path / "home") as broker:
        ctx = await tdt_extension(broker, tmp_path, tdt_workspace, tdt_program)
        preview = await broker.call(ctx, "tdt", "tdt_brain_names_preview", {})
        args = {"expected_sha256": preview["data"]["proposal_sha256"]}
        declined = await broker.request(
            ctx, "tdt", "tdt_brain_names_apply", args, ScriptedConfirmer(Decision.DECLINED)
        )
        unconfirmed = await broker.call(ctx, "tdt", "tdt_brain_names_apply", args)
    assert (declined["error"]["code"], declined["error"]["retry"]) == ("declined", "reread")
    assert (unconfirmed["error"]["code"], unconfirmed["error"]["retry"]) == (
        "confirmation_required",
        "reread",
    )
    assert (tdt_workspace.root / "brain" / "knowledge" / tdt_workspace.legacy_note).exists()


async def test_after_an_uncertain_apply_the_status_tool_is_a_read_that_works(
    tmp_path: Path, tdt_workspace: TdtWorkspace, tdt_program: list[str], monkeypatch: pytest.MonkeyPatch
):
    use_limits(monkeypatch, McpLimits(call_timeout=3.0, start_timeout=60.0, cancel_grace=1.0))
    async with new_broker(tmp_path / "home") as broker:
        ctx = await tdt_extension(broker, tmp_path, tdt_workspace, tdt_program)
        preview = await broker.call(ctx, "tdt", "tdt_brain_names_preview", {})
        proposal = preview["data"]["proposal_sha256"]
        [child] = tdt_children(tdt_workspace.root)
        os.kill(child, signal.SIGSTOP)  # the child takes the apply and never answers it
        await until(lambda: stopped(child), "the child to stop")
        confirmer = ScriptedConfirmer()
        lost = await broker.request(
            ctx, "tdt", "tdt_brain_names_apply", {"expected_sha256": proposal}, confirmer
        )
        status = await broker.call(ctx, "tdt", "tdt_brain_names_status", {"proposal_sha256": proposal})
        sent = [r.outcome for r in broker.audit.records() if r.operation == "tdt_brain_names_apply"]
    assert (lost["error"]["code"], lost["error"]["retry"]) == ("timeout", "inspect_outcome")
    assert set(lost) == TDT_KEYS and lost["api_version"] == 1
    assert len(confirmer.shown) == 1
    assert status["ok"] is True and status["data"]["status"] == "unknown"  # a new child answered
    assert sent.count("sending") == 1  # sent once, never again by Helm


async def test_one_child_serves_every_extension_of_a_workspace(
    tmp_path: Path, tdt_workspace: TdtWorkspace, tdt_program: list[str]
):
    async with new_broker(tmp_path / "home") as broker:
        first = await tdt_extension(broker, tmp_path, tdt_workspace, tdt_program, everyday=False)
        second = await tdt_extension(
            broker, tmp_path, tdt_workspace, tdt_program, everyday=False, ext="com.example.two"
        )
        calls = [broker.call(ctx, "tdt", "tdt_workspace_status", {}) for ctx in (first, second) * 3]
        results = await asyncio.gather(*calls)
        children = tdt_children(tdt_workspace.root)
    assert all(r["ok"] for r in results)
    assert len(children) == 1
    assert tdt_children(tdt_workspace.root) == []  # closing the broker ended it


async def test_turning_everyday_off_restarts_the_child_without_cutting_a_call(
    tmp_path: Path, tdt_workspace: TdtWorkspace, tdt_program: list[str]
):
    async with new_broker(tmp_path / "home") as broker:
        ctx = await tdt_extension(broker, tmp_path, tdt_workspace, tdt_program)
        before = await broker.call(ctx, "tdt", "tdt_workspace_context", {})
        [old] = tdt_children(tdt_workspace.root)
        os.kill(old, signal.SIGSTOP)  # its next call stays in flight until SIGCONT
        await until(lambda: stopped(old), "the child to stop")
        in_flight = asyncio.ensure_future(broker.call(ctx, "tdt", "tdt_workspace_context", {}))
        await until(lambda: queued_bytes(old) > 0, "the call to reach the old child")
        set_everyday(broker.home, "ws", False)
        after = await broker.call(ctx, "tdt", "tdt_workspace_context", {})
        both = sorted(tdt_children(tdt_workspace.root))
        os.kill(old, signal.SIGCONT)
        answered = await asyncio.wait_for(in_flight, 30)
        # The old child ends once its call has its answer.
        await until(lambda: old not in tdt_children(tdt_workspace.root), "the old child to end")
        left = tdt_children(tdt_workspace.root)
    assert before["data"]["profile"] == "everyday"
    assert after["data"]["profile"] == "read-only"
    assert old in both and len(both) == 2
    assert answered["ok"] is True and answered["data"]["profile"] == "everyday"
    assert left == [p for p in both if p != old]
