"""``session/request_permission`` from a real ACP agent: the verdict, the question, the audit."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from broker.agents import PermissionDecided
from broker.audit import AuditLog
from tests.unit.agents.agent_setup import (
    SHORT,
    FakeAsker,
    NeverAnswers,
    Setup,
    make_setup,
    said,
    session,
    turn,
)

OPTIONS = [
    ["once", "Allow", "allow_once"],
    ["always", "Always", "allow_always"],
    ["no", "Reject", "reject_once"],
]


def ask(
    title: str = "Run the tests", kind: str = "execute", options: Any = OPTIONS, **extra: Any
) -> dict[str, Any]:
    return {"ask": {"id": title, "title": title, "kind": kind, "options": options, **extra}}


def pick(option_id: str | None):
    return FakeAsker(lambda q: option_id)


def decisions(events: list[Any]) -> list[tuple[str, str, str]]:
    return [(e.verdict, e.decision, e.answer) for e in events if isinstance(e, PermissionDecided)]


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    s = make_setup(tmp_path)
    s.add_agent()
    return s


async def test_allow_once_answers_the_allow_option_and_asks_again_next_time(setup: Setup):
    asker = pick("once")
    async with setup.host() as host:
        events = await turn(session(host, asker=asker), [ask(), ask()])
    assert said(events) == ["permission: selected once"] * 2
    assert len(asker.asked) == 2
    assert decisions(events) == [("ask", "confirmed", "allow_once")] * 2


async def test_allow_always_is_sticky_for_that_session_only_and_audited_with_its_decision_id(setup: Setup):
    asker = pick("always")
    async with setup.host() as host:
        first = session(host, asker=asker)
        events = await turn(first, [ask(), ask(), ask("Run something else")])
        await first.close()
        again = await turn(session(host, asker=asker), [ask()])
    # Helm keeps the grant itself and answers allow_once, so the agent has nothing to remember.
    assert said(events) == ["permission: selected once"] * 3
    assert [q.title for q in asker.asked] == ["Run the tests", "Run something else", "Run the tests"]
    granted, reused, _ = (e for e in events if isinstance(e, PermissionDecided))
    assert granted.sticky
    assert (reused.verdict, reused.decision) == ("allow", "allowed")
    assert granted.decision_id in reused.reason
    assert decisions(again) == [("ask", "confirmed", "allow_once")]
    records = [r for r in AuditLog(setup.home.path / "audit.jsonl").records()]
    assert records[0].decision_id == granted.decision_id
    assert f"grant {granted.decision_id}" in records[1].reason


async def test_allow_always_covers_the_exact_request_and_never_a_path_outside_the_roots(
    setup: Setup, tmp_path: Path
):
    asker = pick("always")
    inside = str(setup.root / "notes.txt")
    ssh_key = tmp_path / ".ssh" / "id_ed25519"
    ssh_key.parent.mkdir()
    ssh_key.write_text("PRIVATE KEY\n")
    steps = [
        ask("Read file", "read", locations=[inside]),
        ask("Read file", "read", locations=[inside]),  # the same request: the grant holds
        ask("Read file", "read", locations=[str(ssh_key)]),  # same title, a path outside: asked
        ask("Read file", "read", locations=[str(setup.root / "other.txt")]),  # another path: asked
    ]
    async with setup.host() as host:
        events = await turn(session(host, asker=asker), steps)
    verdicts = [(e.verdict, e.decision) for e in events if isinstance(e, PermissionDecided)]
    asked = ("ask", "confirmed")
    assert verdicts == [asked, ("allow", "allowed"), asked, asked]
    assert len(asker.asked) == 3


@pytest.mark.parametrize(
    ("asker", "options", "said_", "decision"),
    [
        pytest.param(pick("no"), OPTIONS, "permission: selected no", ("ask", "declined", "reject_once"),
                     id="reject"),
        pytest.param(pick(None), OPTIONS, "permission: selected no", ("ask", "declined", "reject_once"),
                     id="closed-question"),
        pytest.param(pick(None), OPTIONS[:2], "permission: cancelled", ("ask", "declined", "cancelled"),
                     id="refusal-without-a-reject-offered-is-cancelled"),
        pytest.param(NeverAnswers(), OPTIONS, "permission: selected no", ("ask", "expired", "reject_once"),
                     id="question-timeout"),
    ],
)  # fmt: skip
async def test_every_refusal_rejects_or_cancels(
    setup: Setup, asker: Any, options: Any, said_: str, decision: tuple[str, str, str]
):
    async with setup.host(replace(SHORT, question_timeout=0.5)) as host:
        events = await turn(session(host, asker=asker), [ask(options=options)])
    assert said(events) == [said_]
    assert decisions(events) == [decision]


async def test_the_policy_denies_an_edit_when_the_run_does_not_allow_writes_without_asking(setup: Setup):
    asker = pick("once")
    async with setup.host() as host:
        events = await turn(session(host, asker=asker), [ask("Edit a.py", "edit")])
    assert said(events) == ["permission: selected no"]
    assert asker.asked == []
    assert decisions(events) == [("deny", "refused", "reject_once")]


async def test_an_edit_question_shows_the_diff_and_the_offered_options(setup: Setup):
    asker = pick(None)
    diff = {"path": str(setup.root / "a.py"), "old_text": "x = 1\n", "new_text": "x = 2\n"}
    async with setup.host() as host:
        await turn(session(host, asker=asker, write=True), [ask("Edit a.py", "edit", diff=diff)])
    question = asker.asked[0]
    assert (question.title, question.kind) == ("Edit a.py", "edit")
    assert "-x = 1\n+x = 2\n" in question.diff
    assert [o.kind for o in question.options] == ["allow_once", "allow_always", "reject_once"]


async def test_reads_inside_the_roots_are_allowed_by_policy_only_when_the_profile_says_so(tmp_path: Path):
    s = make_setup(tmp_path)
    s.add_agent("scripted", allow_reads=True)
    asker = pick(None)
    inside = ask("Read a.py", "read", locations=[str(s.root / "a.py")])
    outside = ask("Read passwd", "read", locations=["/etc/passwd"])
    async with s.host() as host:
        events = await turn(session(host, asker=asker), [inside, outside])
    assert decisions(events) == [("allow", "allowed", "allow_once"), ("ask", "declined", "reject_once")]
    records = list(AuditLog(s.home.path / "audit.jsonl").records())
    assert records[0].reason.startswith("a read inside")


async def test_no_terminal_and_no_mcp_servers_are_offered_and_a_terminal_request_is_refused(setup: Setup):
    async with setup.host() as host:
        events = await turn(session(host), [{"caps": 1}, {"terminal": "ls"}])
    caps, terminal = said(events)
    offered = json.loads(caps)
    assert offered["capabilities"]["terminal"] is False
    assert offered["capabilities"]["fs"] == {"readTextFile": True, "writeTextFile": True}
    assert offered["mcp_servers"] == []
    assert terminal.startswith("terminal error: Method not found")
