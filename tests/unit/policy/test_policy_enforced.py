"""The organisation's policy, enforced end to end through the real broker and real servers:
forbidden installs, calls, kinds, writes, MCP programs and agents are refused, and an approved
extension is stopped when a policy arrives that forbids it."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from broker import Broker, CallContext, Decision, WriteSummary
from broker.approval import Standing
from broker.errors import PolicyError, ProfileError
from broker.extensions import install, review_and_approve
from broker.kinds.db.explorer import DbExplorer
from broker.kinds.db.profiles import DbProfile
from broker.kinds.http.profiles import SERVICES, ServiceProfile
from broker.policy.source import NO_POLICY
from broker.workspaces import add_workspace
from tests.helpers import ScriptedConfirmer, manifest_dict, new_broker, setup_extension, write_extension
from tests.support import REPO
from tests.unit.kinds.db_setup import add_profile
from tests.unit.kinds.http_hostile import Hostile, hostile_server
from tests.unit.kinds.http_setup import code, service_extension
from tests.unit.kinds.mcp_setup import add_stdio, mcp_extension
from tests.unit.policy.policy_setup import PolicyFile

WORDS = "refused by your organisation's policy"
CALLS: dict[str, Any] = {
    "echo": {"method": "GET", "path": "/echo"},
    "slow": {"method": "GET", "path": "/drip"},
}
MARKER = str(REPO / "tests" / "unit" / "policy" / "started_marker.py")


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    async with new_broker(tmp_path / "home") as b:
        yield b


@pytest.fixture
async def hostile() -> AsyncIterator[Hostile]:
    async with hostile_server() as s:
        yield s


def message(result: dict[str, Any]) -> str:
    return str(result["error"]["message"])


# -- installs and approvals -----------------------------------------------------------------
async def test_an_extension_the_policy_does_not_allow_is_not_installed(
    broker: Broker, tmp_path: Path, policy: PolicyFile
):
    policy.write({"extensions": {"allow": [{"id": "com.example.other"}]}})
    add_workspace(broker.home, "ws", tmp_path)
    folder = write_extension(tmp_path / "ext", manifest_dict([]))
    with pytest.raises(PolicyError, match=rf"{WORDS} \(extensions\.allow\): com\.example\.test is not one"):
        install(broker.home, "ws", folder)
    assert broker.home.settings().workspace("ws").extensions == {}


async def test_an_extension_allowed_with_a_digest_runs_only_in_that_version(
    broker: Broker, tmp_path: Path, policy: PolicyFile
):
    ctx = await setup_extension(broker, tmp_path, manifest_dict([]), approved=False)
    digest = broker.manifest("ws", ctx.extension).digest()
    policy.write({"extensions": {"allow": [{"id": ctx.extension, "digest": "0" * 64}]}})
    decision = broker.standing("ws", ctx.extension)
    assert decision.standing is Standing.FORBIDDEN and "allowed only as another version" in decision.message
    with pytest.raises(PolicyError, match=rf"^{ctx.extension}: {WORDS} \(extensions\.allow\)"):
        await review_and_approve(broker, "ws", ctx.extension)
    policy.write({"extensions": {"allow": [{"id": ctx.extension, "digest": digest}]}})
    await review_and_approve(broker, "ws", ctx.extension)
    assert broker.standing("ws", ctx.extension).allows_calls


async def test_only_from_named_catalogues_refuses_an_extension_installed_from_a_folder(
    broker: Broker, tmp_path: Path, policy: PolicyFile
):
    policy.write({"extensions": {"catalogues": ["corp"]}})
    add_workspace(broker.home, "ws", tmp_path)
    with pytest.raises(
        PolicyError, match=r"\(extensions\.catalogues\): .* one of the catalogues it names \(corp\)"
    ):
        install(broker.home, "ws", write_extension(tmp_path / "ext", manifest_dict([])))


# -- calls ----------------------------------------------------------------------------------
async def test_a_call_to_a_service_the_policy_does_not_allow_is_refused_and_never_sent(
    broker: Broker, tmp_path: Path, hostile: Hostile, policy: PolicyFile
):
    ctx = await service_extension(broker, tmp_path, hostile.url, CALLS)
    assert (await broker.call(ctx, "api", "echo", {}))["ok"]
    policy.write({"services": {"base_urls": ["https://api.example.com/*"]}})
    refused = await broker.call(ctx, "api", "echo", {})
    assert code(refused) == "refused"
    assert message(refused) == f"{WORDS} (services.base_urls): service 'svc' is not at a base URL it allows"
    assert "127.0.0.1" not in message(refused)  # the extension never learns where the service is
    assert len(hostile.seen) == 1
    (record,) = [r for r in broker.audit.records() if r.outcome == "policy"]
    assert (record.decision, record.title, record.extension) == (
        "refused",
        "policy rule services.base_urls",
        ctx.extension,
    )
    assert record.reason == message(refused)
    policy.write({"services": {"base_urls": [f"{hostile.url}/*"]}})
    assert (await broker.call(ctx, "api", "echo", {}))["ok"]


async def test_a_profile_the_policy_does_not_allow_cannot_be_saved(broker: Broker, policy: PolicyFile):
    policy.write({"services": {"base_urls": ["https://*.example.com/*"]}})
    store = SERVICES.store(broker.home, broker.credentials)
    with pytest.raises(ProfileError, match=r"\(services\.base_urls\): service 'gh' is not at a base URL"):
        store.save(ServiceProfile("gh", "https://api.github.com"), {"token": "t"})
    store.save(ServiceProfile("ex", "https://api.example.com/v1"), {"token": "t"})
    assert store.names() == ["ex"]


async def test_a_kind_the_policy_does_not_allow_stops_an_approved_extension(
    broker: Broker, tmp_path: Path, hostile: Hostile, policy: PolicyFile
):
    ctx = await service_extension(broker, tmp_path, hostile.url, CALLS)
    policy.write({"kinds": {"files": {}}})
    decision = broker.standing("ws", ctx.extension)
    assert decision.standing is Standing.FORBIDDEN
    refused = await broker.call(ctx, "api", "echo", {})
    assert [r.title for r in broker.audit.records() if r.outcome == "policy"] == ["policy rule kinds"]
    assert message(refused).endswith(
        f"{WORDS} (kinds): com.example.test declares connection 'api' of kind http, a kind it does not allow"
    )
    state = await broker.call(ctx, "$state", "get", {})  # its built-in calls too
    assert code(state) == "refused" and WORDS in message(state)
    assert hostile.seen == []


FILES = {"id": "notes", "kind": "files", "root": "workspace", "paths": ["*.md"],
         "operations": ["list", "read", "write"]}  # fmt: skip


async def files_extension(broker: Broker, tmp_path: Path) -> tuple[CallContext, Path]:
    ctx = await setup_extension(broker, tmp_path, manifest_dict([FILES], write=True))
    note = tmp_path / "root" / "a.md"
    note.write_text("before\n", encoding="utf-8")
    return ctx, note


async def test_writes_of_a_kind_the_policy_keeps_read_only_are_refused_before_the_dialog(
    broker: Broker, tmp_path: Path, policy: PolicyFile
):
    ctx, note = await files_extension(broker, tmp_path)
    policy.write({"kinds": {"files": {"write": False}}})
    read = await broker.call(ctx, "notes", "read", {"path": "a.md"})
    assert read["ok"]
    confirmer = ScriptedConfirmer()
    args = {"path": "a.md", "text": "after\n", "expected_sha256": read["data"]["sha256"]}
    refused = await broker.request(ctx, "notes", "write", args, confirmer)
    assert (
        message(refused) == f"{WORDS} (kinds.files.write): writes through files connections are not allowed"
    )
    assert confirmer.shown == [] and note.read_text() == "before\n"


async def test_a_write_confirmed_after_a_policy_forbids_it_is_not_sent(
    broker: Broker, tmp_path: Path, policy: PolicyFile
):
    ctx, note = await files_extension(broker, tmp_path)
    read = await broker.call(ctx, "notes", "read", {"path": "a.md"})

    async def confirm_after_the_policy_arrives(summary: WriteSummary) -> Decision:
        policy.write({"kinds": {"files": {"write": False}}})  # while the dialog is open
        return Decision.CONFIRMED

    args = {"path": "a.md", "text": "after\n", "expected_sha256": read["data"]["sha256"]}
    refused = await broker.request(ctx, "notes", "write", args, confirm_after_the_policy_arrives)
    assert code(refused) == "refused" and "(kinds.files.write)" in message(refused)
    assert note.read_text() == "before\n"


# -- MCP servers ----------------------------------------------------------------------------
async def test_an_mcp_server_whose_program_the_policy_does_not_allow_is_never_started(
    tmp_path: Path, policy: PolicyFile, mcp_time_command: list[str]
):
    mark = tmp_path / "started"
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "time", [sys.executable, MARKER, str(mark), *mcp_time_command])
        policy.write({"mcp": {"commands": ["/usr/bin/true"]}})
        ctx = await mcp_extension(broker, tmp_path, "time", ["get_current_time"])
        refused = await broker.call(ctx, "m", "get_current_time", {"timezone": "UTC"})
        assert (
            message(refused) == f"{WORDS} (mcp.commands): MCP server 'time' runs a program it does not allow"
        )
        servers = await broker.mcp_servers()
        with pytest.raises(Exception, match=r"\(mcp\.commands\)"):  # Settings' Test, an app's review
            await servers.list_tools(broker.home.settings().workspace("ws"), "time")
    assert not mark.exists()
    policy.write({"mcp": {"commands": [sys.executable]}})
    async with new_broker(tmp_path / "home") as broker:
        result = await broker.call(ctx, "m", "get_current_time", {"timezone": "UTC"})
        assert result["ok"], result
    assert mark.exists()


async def test_a_policy_deployed_while_an_mcp_server_runs_applies_to_the_very_next_call(
    broker: Broker, tmp_path: Path, policy: PolicyFile, mcp_time_command: list[str]
):
    add_stdio(broker, "time", mcp_time_command)
    ctx = await mcp_extension(broker, tmp_path, "time", ["get_current_time"])
    args = {"timezone": "UTC"}
    assert (await broker.call(ctx, "m", "get_current_time", args))["ok"]  # the session runs
    policy.write({"mcp": {"commands": ["/usr/bin/true"]}})
    refused = await broker.call(ctx, "m", "get_current_time", args)
    assert message(refused) == f"{WORDS} (mcp.commands): MCP server 'time' runs a program it does not allow"
    policy.write({"mcp": {"commands": [mcp_time_command[0]]}})
    assert (await broker.call(ctx, "m", "get_current_time", args))["ok"]
    servers = await broker.mcp_servers()
    profile = servers.profile("time")[0]
    policy.write({"mcp": {"commands": ["/usr/bin/true"]}})
    assert "(mcp.commands)" in str(servers.profiles.refusal(profile))  # the policy in force now
    assert servers.profiles.refusal(profile, NO_POLICY) is None  # a call's own reading, when given


# -- stopping what a new policy forbids -----------------------------------------------------
async def test_an_approved_extension_is_stopped_when_a_policy_arrives(
    broker: Broker, tmp_path: Path, hostile: Hostile, policy: PolicyFile
):
    ctx = await service_extension(broker, tmp_path, hostile.url, CALLS)
    first = broker.policy_stops()
    assert first is not None and first.stops == () and first.notice == ""
    assert broker.policy_stops() is None  # nothing changed since
    running = asyncio.create_task(broker.call(ctx, "api", "slow", {}))
    for _ in range(500):
        if hostile.seen:
            break
        await asyncio.sleep(0.01)
    assert hostile.seen, "the call never reached the server"
    policy.write({"extensions": {"allow": [{"id": "com.example.allowed"}]}})
    change = broker.policy_stops()
    assert change is not None
    (stop,) = change.stops
    assert change.notice.startswith(
        f"Your organisation's policy stopped {ctx.extension}; 1 running call(s) cancelled."
    )
    assert (stop.workspace, stop.extension, stop.cancelled) == ("ws", ctx.extension, 1)
    assert f"{WORDS} (extensions.allow)" in stop.reason
    result = await asyncio.wait_for(running, 10)
    assert code(result) == "refused" and f"{WORDS} (extensions.allow)" in message(result)
    assert code(await broker.call(ctx, "api", "echo", {})) == "refused"
    assert broker.policy_stops() is None  # said once per change
    assert not broker.activity.switch.is_stopped("ws", ctx.extension)  # not the user's stop
    policy.remove()
    assert (await broker.call(ctx, "api", "echo", {}))["ok"]


async def test_a_policy_file_others_could_write_stops_every_extension(
    broker: Broker, tmp_path: Path, hostile: Hostile, policy: PolicyFile
):
    ctx = await service_extension(broker, tmp_path, hostile.url, CALLS)
    policy.write({}, mode=0o666)
    refused = await broker.call(ctx, "api", "echo", {})
    assert f"{WORDS} (policy file): Helm refuses the policy file {policy.path}" in message(refused)
    assert "writable by its group and everyone" in message(refused)
    assert hostile.seen == []


def _local_sqlite(broker: Broker, tmp_path: Path) -> None:
    """A database profile ``local``: a SQLite file with one empty table ``t``."""
    db = tmp_path / "a.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    add_profile(broker, DbProfile(name="local", engine="sqlite", path=str(db)))


async def test_a_db_read_on_a_profile_the_policy_refuses_is_refused(
    broker: Broker, tmp_path: Path, policy: PolicyFile
):
    _local_sqlite(broker, tmp_path)
    conn_json = {"id": "app", "kind": "db", "service": "local", "engine": "sqlite",
                 "queries": {"count": {"sql": "SELECT count(*) FROM t"}}}  # fmt: skip
    ctx = await setup_extension(broker, tmp_path, manifest_dict([conn_json]))
    assert (await broker.call(ctx, "app", "count", {}))["ok"]
    policy.write({"databases": {"engines": ["postgres"]}})
    refused = await broker.call(ctx, "app", "count", {})
    why = "database profile 'local' is a sqlite database, an engine it does not allow"
    assert message(refused) == f"{WORDS} (databases.engines): {why}"


# -- Helm's own parts -----------------------------------------------------------------------
async def test_the_db_explorer_opens_no_database_the_policy_refuses(
    broker: Broker, tmp_path: Path, policy: PolicyFile
):
    _local_sqlite(broker, tmp_path)
    explorer = DbExplorer(broker)
    assert (await explorer.query("local", "SELECT count(*) FROM t"))["ok"]
    policy.write({"databases": {"engines": ["postgres"]}})
    refused = await explorer.query("local", "SELECT count(*) FROM t")
    why = "database profile 'local' is a sqlite database, an engine it does not allow"
    assert message(refused) == f"{WORDS} (databases.engines): {why}"
