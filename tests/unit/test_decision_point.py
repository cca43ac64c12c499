"""The organisation's decision point, against a server that implements HELM's Kernel contract:
only an exact ALLOW with its ids lets a request go on; every other answer, and every failure,
refuses; the key never shows. Writes ask it (when it asks about writes) before the user."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from broker import Broker, CallContext, teams
from broker.credentials import FileStore
from broker.decision_point import DecisionPointClient, DecisionPointConfig, PointRequest
from broker.settings import Home
from tests.helpers import ScriptedConfirmer, manifest_dict, new_broker, setup_extension
from tests.servers.decision_point import (
    FAILURE_MODES,
    VERDICT_MODES,
    DecisionPointServer,
    decision_point_server,
)
from tests.support import LOOPBACK, free_port

KEY = "pdp-key-canary-31f4"
KEY_REF = "teams/decision_point/key"
REQUEST = PointRequest(
    "tool.acp.claude.edit", "Edit a.py", {"path": "a.py"}, "s-1", "T2", "E2", {"workspace": "ws"}
)


@pytest.fixture
def pdp() -> Iterator[DecisionPointServer]:
    with decision_point_server(KEY) as server:
        yield server


def config(server: DecisionPointServer, **kw: Any) -> DecisionPointConfig:
    return DecisionPointConfig(server.url, server.tenant, server.principal, KEY_REF, **kw)


def client(
    tmp_path: Path, server: DecisionPointServer, *, key: str | None = KEY, timeout: float = 5.0
) -> DecisionPointClient:
    store = FileStore(tmp_path / "credentials.json")
    if key is not None:
        store.set(KEY_REF, key)
    return DecisionPointClient(config(server), store, timeout=timeout)


@pytest.mark.parametrize("verdict", VERDICT_MODES)
async def test_each_verdict_comes_back_with_its_ids_and_only_allow_allows(
    tmp_path: Path, pdp: DecisionPointServer, verdict: str
) -> None:
    pdp.mode = verdict
    answer = await client(tmp_path, pdp).evaluate(REQUEST)
    assert (answer.verdict, answer.decision_id, answer.receipt_id) == (verdict, "dec-1", "rcpt-1")
    assert answer.allowed is (verdict == "ALLOW")
    [seen] = pdp.seen
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert (seen.headers["x-helm-tenant-id"], seen.headers["x-helm-principal-id"]) == (
        "tenant-a",
        "helm-desktop",
    )
    assert seen.body == {
        "principal": "helm-desktop",
        "action": "EXECUTE_TOOL",
        "resource": "tool.acp.claude.edit",
        "context": {"workspace": "ws", "tool": "Edit a.py", "args": {"path": "a.py"}, "session_id": "s-1",
                    "risk_class": "T2", "effect_class": "E2"},
    }  # fmt: skip
    if not answer.allowed:
        assert "dec-1" in answer.refusal() and "organisation's decision point" in answer.refusal()


@pytest.mark.parametrize("mode", [*FAILURE_MODES, "wrong-key", "no-key", "unreachable"])
async def test_every_failure_refuses_and_never_shows_the_key(
    tmp_path: Path, pdp: DecisionPointServer, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    pdp.mode = mode if mode in FAILURE_MODES else "ALLOW"
    asker = client(tmp_path, pdp, key={"wrong-key": "other-key", "no-key": None}.get(mode, KEY), timeout=0.5)
    if mode == "unreachable":
        asker.config = DecisionPointConfig(
            f"http://{LOOPBACK}:{free_port()}", "tenant-a", "helm-desktop", KEY_REF
        )
    answer = await asker.evaluate(REQUEST)
    assert (answer.verdict, answer.allowed) == ("ERROR", False)
    assert answer.problem
    said = answer.refusal() + caplog.text
    assert "gave no usable answer" in said
    assert KEY not in said


async def test_no_answer_within_the_timeout_refuses(tmp_path: Path, pdp: DecisionPointServer) -> None:
    pdp.mode = "silent"
    answer = await client(tmp_path, pdp, timeout=0.3).evaluate(REQUEST)
    assert answer.problem == "no answer within 0.3 s"


# -- writes -------------------------------------------------------------------------------------
NOTES = {
    "id": "notes",
    "kind": "files",
    "root": "workspace",
    "paths": ["notes/*.md"],
    "operations": ["write"],
}
ARGS = {"path": "notes/a.md", "text": "changed\n", "expected_sha256": hashlib.sha256(b"hello\n").hexdigest()}


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    async with new_broker(tmp_path / "home") as b:
        yield b


async def writer(
    broker: Broker, tmp_path: Path, server: DecisionPointServer, *, writes: bool = True
) -> CallContext:
    teams.set_decision_point(broker.home, config(server, writes=writes))
    broker.credentials.set(KEY_REF, KEY)
    ctx = await setup_extension(broker, tmp_path, manifest_dict([NOTES], write=True))
    (tmp_path / "root" / "notes").mkdir()
    (tmp_path / "root" / "notes" / "a.md").write_text("hello\n")
    return ctx


@pytest.mark.parametrize("verdict", ["DENY", "ESCALATE", "PENDING", "garbage"])
async def test_a_write_the_decision_point_does_not_allow_is_refused_before_the_user_is_asked(
    broker: Broker, tmp_path: Path, pdp: DecisionPointServer, verdict: str
) -> None:
    ctx = await writer(broker, tmp_path, pdp)
    pdp.mode = verdict
    confirm = ScriptedConfirmer()
    result = await broker.request(ctx, "notes", "write", ARGS, confirm)
    assert result["error"]["code"] == "refused"
    assert "organisation's decision point" in result["error"]["message"]
    assert confirm.shown == []
    assert (tmp_path / "root" / "notes" / "a.md").read_text() == "hello\n"
    [rec] = broker.audit.records()
    assert (rec.decision, rec.outcome) == ("refused", "nothing sent")
    expected = ("ERROR", "", "") if verdict == "garbage" else (verdict, "dec-1", "rcpt-1")
    assert (rec.point_verdict, rec.point_decision_id, rec.point_receipt_id) == expected
    [seen] = pdp.seen if verdict != "garbage" else [None]
    if seen is not None:
        assert seen.body["resource"] == "tool.helm.files.notes"
        assert seen.body["context"]["args"]["text"] == "changed\n"
        assert (seen.body["context"]["risk_class"], seen.body["context"]["effect_class"]) == ("T2", "E2")


async def test_an_allowed_write_still_waits_for_the_user_and_its_records_carry_the_receipt(
    broker: Broker, tmp_path: Path, pdp: DecisionPointServer
) -> None:
    ctx = await writer(broker, tmp_path, pdp)
    confirm = ScriptedConfirmer()
    assert (await broker.request(ctx, "notes", "write", ARGS, confirm))["ok"]
    assert len(confirm.shown) == 1
    records = list(broker.audit.records())
    assert [(r.decision, r.outcome, r.point_verdict, r.point_receipt_id) for r in records] == [
        ("confirmed", "sending", "ALLOW", "rcpt-1"), ("confirmed", "ok", "ALLOW", "rcpt-1")]  # fmt: skip


async def test_the_two_step_flow_asks_it_too(
    broker: Broker, tmp_path: Path, pdp: DecisionPointServer
) -> None:
    ctx = await writer(broker, tmp_path, pdp)
    summary = await broker.describe_write(ctx, "notes", "write", ARGS)
    pdp.mode = "DENY"
    result = await broker.call(ctx, "notes", "write", ARGS, confirmation=summary.token)
    assert result["error"]["code"] == "refused"
    assert (tmp_path / "root" / "notes" / "a.md").read_text() == "hello\n"


async def test_a_decision_point_that_does_not_ask_about_writes_is_not_asked(
    broker: Broker, tmp_path: Path, pdp: DecisionPointServer
) -> None:
    ctx = await writer(broker, tmp_path, pdp, writes=False)
    pdp.mode = "DENY"
    assert (await broker.request(ctx, "notes", "write", ARGS, ScriptedConfirmer()))["ok"]
    assert pdp.seen == []
    assert teams.decision_point(Home(broker.home.path).settings()) == config(pdp, writes=False)
