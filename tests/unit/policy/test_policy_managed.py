"""What the organisation's policy adds is used without the user's settings and outranks them:
its audit sinks receive the records (the user has none, and cannot remove them), and its
decision point is asked before a write even where the user named another one that allows."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from broker import Broker, CallContext, teams
from broker.decision_point import DecisionPointConfig
from tests.helpers import ScriptedConfirmer, manifest_dict, new_broker, setup_extension
from tests.servers.decision_point import DecisionPointServer, decision_point_server
from tests.unit.policy.policy_setup import PolicyFile

KEY, KEY_REF = "org-pdp-key-canary-77aa", "teams/decision_point/key"
NOTES = {"id": "notes", "kind": "files", "root": "workspace", "paths": ["notes/*.md"],
         "operations": ["read", "write"]}  # fmt: skip
ARGS = {"path": "notes/a.md", "text": "changed\n", "expected_sha256": hashlib.sha256(b"hello\n").hexdigest()}


async def writer(broker: Broker, tmp_path: Path) -> CallContext:
    ctx = await setup_extension(broker, tmp_path, manifest_dict([NOTES], write=True))
    (tmp_path / "root" / "notes").mkdir()
    (tmp_path / "root" / "notes" / "a.md").write_text("hello\n")
    return ctx


def entries(path: Path, count: int, within: float = 20.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + within
    while True:
        lines = path.read_text("ascii").splitlines() if path.exists() else []
        if len(lines) >= count or time.monotonic() > deadline:
            return [json.loads(line) for line in lines]
        time.sleep(0.05)


def point(server: DecisionPointServer, *, writes: bool = True) -> dict[str, Any]:
    return {"url": server.url, "tenant_id": server.tenant, "principal_id": server.principal,
            "key_ref": KEY_REF, "writes": writes}  # fmt: skip


async def test_the_policys_audit_sink_gets_the_records_though_the_user_named_none(
    policy: PolicyFile, tmp_path: Path
) -> None:
    sink = tmp_path / "org" / "helm-audit.jsonl"
    sink.parent.mkdir()
    policy.write({"audit_sinks": [{"type": "jsonl", "path": str(sink), "activity": True}]})
    async with new_broker(tmp_path / "home") as broker:
        ctx = await writer(broker, tmp_path)
        assert (await broker.request(ctx, "notes", "write", ARGS, ScriptedConfirmer()))["ok"]
        assert teams.audit_sinks(broker.home.settings()) == ()  # the user has none of their own
        [status] = broker.export.status()
        assert status.managed and status.target.endswith("helm-audit.jsonl")
        got = entries(sink, 3)
    audit = [(e["decision"], e["outcome"]) for e in got if e["type"] == "audit"]
    assert audit == [("confirmed", "sending"), ("confirmed", "ok")]
    assert [e["operation"] for e in got if e["type"] == "activity"] == ["write"]


async def test_a_policy_that_drops_its_sink_stops_exporting_to_it(policy: PolicyFile, tmp_path: Path) -> None:
    sink = tmp_path / "org.jsonl"
    policy.write({"audit_sinks": [{"type": "jsonl", "path": str(sink)}]})
    async with new_broker(tmp_path / "home") as broker:
        ctx = await writer(broker, tmp_path)
        assert (await broker.request(ctx, "notes", "write", ARGS, ScriptedConfirmer()))["ok"]
        assert len(entries(sink, 2)) == 2
        policy.write({})
        assert broker.export.status() == []
        args = {**ARGS, "text": "again\n", "expected_sha256": hashlib.sha256(b"changed\n").hexdigest()}
        assert (await broker.request(ctx, "notes", "write", args, ScriptedConfirmer()))["ok"]
    assert len(sink.read_text("ascii").splitlines()) == 2


async def test_the_policys_decision_point_outranks_the_users(policy: PolicyFile, tmp_path: Path) -> None:
    with decision_point_server(KEY) as users, decision_point_server(KEY) as organisations:
        organisations.mode = "DENY"
        policy.write({"decision_point": point(organisations)})
        async with new_broker(tmp_path / "home") as broker:
            broker.credentials.set(KEY_REF, KEY)
            own = DecisionPointConfig(users.url, users.tenant, users.principal, KEY_REF, writes=True)
            teams.set_decision_point(broker.home, own)
            ctx = await writer(broker, tmp_path)
            confirm = ScriptedConfirmer()
            result = await broker.request(ctx, "notes", "write", ARGS, confirm)
            assert result["error"]["code"] == "refused"
            assert "organisation's decision point" in result["error"]["message"]
            assert confirm.shown == [] and users.seen == [] and len(organisations.seen) == 1
            policy.remove()  # without the policy, the user's own is asked again (it allows)
            assert (await broker.request(ctx, "notes", "write", ARGS, confirm))["ok"]
            assert len(users.seen) == 1
    assert KEY not in (tmp_path / "home" / "audit.jsonl").read_text("utf-8")
