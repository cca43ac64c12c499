"""A real ACP agent's permission requests are put to the organisation's decision point: anything
but ALLOW refuses without asking the user, ALLOW leaves the user's question in place, and the
decision point's ids are in the audit record."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from broker import teams
from broker.agents import AgentHost
from broker.audit import AuditLog
from broker.decision_point import DecisionPointConfig, DecisionPoints
from tests.servers.decision_point import DecisionPointServer, decision_point_server
from tests.unit.agents.agent_setup import SHORT, FakeAsker, Setup, make_setup, said, session, turn

KEY = "pdp-agent-key-77e1"
OPTIONS = [["once", "Allow", "allow_once"], ["no", "Reject", "reject_once"]]
ASK = {"ask": {"id": "t1", "title": "Run the tests", "kind": "execute", "options": OPTIONS,
               "input": {"command": "make test"}}}  # fmt: skip


@pytest.fixture
def pdp() -> Iterator[DecisionPointServer]:
    with decision_point_server(KEY) as server:
        yield server


@pytest.fixture
def setup(tmp_path: Path, pdp: DecisionPointServer) -> Setup:
    s = make_setup(tmp_path)
    s.add_agent()
    teams.set_decision_point(s.home, DecisionPointConfig(pdp.url, pdp.tenant, pdp.principal, "pdp/key"))
    s.credentials.set("pdp/key", KEY)
    return s


def host(setup: Setup, timeout: float = 5.0) -> AgentHost:
    return AgentHost(
        setup.home,
        setup.credentials,
        limits=SHORT,
        point=DecisionPoints(setup.home, setup.credentials, timeout=timeout),
    )


@pytest.mark.parametrize("mode", ["DENY", "ESCALATE", "PENDING", "garbage", "silent"])
async def test_a_request_the_decision_point_does_not_allow_is_refused_without_asking(
    setup: Setup, pdp: DecisionPointServer, mode: str
) -> None:
    pdp.mode = mode
    asker = FakeAsker(lambda q: "once")
    async with host(setup, timeout=0.5) as h:
        events = await turn(session(h, asker=asker), [ASK])
    assert said(events) == ["permission: selected no"]
    assert asker.asked == []
    [rec] = AuditLog(setup.home.path / "audit.jsonl").records()
    assert rec.decision == "refused" and "organisation's decision point" in rec.reason
    assert rec.point_verdict == (mode if mode in ("DENY", "ESCALATE", "PENDING") else "ERROR")


async def test_an_allowed_request_is_still_asked_and_audited_with_the_decision_points_ids(
    setup: Setup, pdp: DecisionPointServer
) -> None:
    asker = FakeAsker(lambda q: "once")
    async with host(setup) as h:
        events = await turn(session(h, asker=asker), [ASK])
    assert said(events) == ["permission: selected once"]
    assert len(asker.asked) == 1
    [rec] = AuditLog(setup.home.path / "audit.jsonl").records()
    assert (rec.point_verdict, rec.point_decision_id, rec.point_receipt_id) == ("ALLOW", "dec-1", "rcpt-1")
    [seen] = pdp.seen
    assert seen.body["resource"] == "tool.acp.scripted.execute"
    context = seen.body["context"]
    assert (context["tool"], context["args"], context["risk_class"], context["effect_class"]) == (
        "Run the tests", {"command": "make test"}, "T3", "E4")  # fmt: skip
    assert context["session_id"]


async def test_a_request_helms_own_rules_refuse_is_not_put_to_the_decision_point(
    setup: Setup, pdp: DecisionPointServer
) -> None:
    edit = {"ask": {"id": "e", "title": "Edit", "kind": "edit", "options": OPTIONS}}
    async with host(setup) as h:  # a read-only run: Helm refuses every edit itself
        events = await turn(session(h, write=False), [edit])
    assert said(events) == ["permission: selected no"]
    assert pdp.seen == []


CANARY = "canary-agent-arg-4d2e"


async def test_an_agents_decision_is_exported_with_the_decision_points_ids_and_without_its_title_or_input(
    setup: Setup, pdp: DecisionPointServer, tmp_path: Path
) -> None:
    from broker import Broker

    export = tmp_path / "export.jsonl"
    teams.add_sink(setup.home, "file", {"type": "jsonl", "path": str(export)})
    ask = {"ask": {"id": "t2", "title": f"Run {CANARY}", "kind": "execute", "options": OPTIONS,
                   "input": {"command": CANARY}}}  # fmt: skip
    async with Broker(setup.home.path, credentials=setup.credentials) as broker:
        points = DecisionPoints(broker.home, broker.credentials, timeout=5.0)
        async with AgentHost(
            broker.home, broker.credentials, limits=SHORT, writes=broker.writes, point=points
        ) as h:
            events = await turn(session(h, asker=FakeAsker(lambda q: "once")), [ask])
        assert said(events) == ["permission: selected once"]
    # The broker closed: its queues were drained into the file.
    [entry] = [json.loads(line) for line in export.read_text("ascii").splitlines()]
    assert (entry["requester"]["role"], entry["requester"]["id"], entry["operation"]) == (
        "agent", "scripted", "session/request_permission")  # fmt: skip
    assert entry["decision_point"] == {"verdict": "ALLOW", "decision_id": "dec-1", "receipt_id": "rcpt-1"}
    assert CANARY in pdp.seen[0].body["context"]["args"]["command"]  # the decision point is told…
    assert CANARY not in export.read_text("ascii")  # …the export never is
    assert CANARY in (setup.home.path / "audit.jsonl").read_text("utf-8")  # the local log keeps the title


async def test_an_agent_host_of_its_own_as_helm_agent_runs_it_exports_its_decisions_too(
    setup: Setup, pdp: DecisionPointServer, tmp_path: Path
) -> None:
    export = tmp_path / "export.jsonl"
    teams.add_sink(setup.home, "file", {"type": "jsonl", "path": str(export)})
    async with host(setup) as h:
        await turn(session(h, asker=FakeAsker(lambda q: "once")), [ASK])
    [entry] = [json.loads(line) for line in export.read_text("ascii").splitlines()]
    assert (entry["decision"], entry["decision_point"]["receipt_id"]) == ("confirmed", "rcpt-1")
