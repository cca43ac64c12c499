"""``fs/read_text_file`` and ``fs/write_text_file`` from a real ACP agent, inside the roots only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from broker.agents import fsguard
from broker.agents.fsguard import Root
from broker.audit import AuditLog
from broker.context import AgentRequester
from broker.errors import CallError
from broker.summary import Decision, WriteSummary
from tests.helpers import ScriptedConfirmer
from tests.unit.agents.agent_setup import SHORT, Setup, make_setup, said, session, turn


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    s = make_setup(tmp_path)
    s.add_agent()
    (s.root / "notes.txt").write_text("one\ntwo\nthree\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    return s


async def test_a_read_inside_the_root_is_served_with_its_lines(setup: Setup):
    async with setup.host() as host:
        events = await turn(session(host), [
            {"read": str(setup.root / "notes.txt")},
            {"read": str(setup.root / "notes.txt"), "line": 2, "limit": 1},
        ])  # fmt: skip
    assert said(events) == ["read ok: one\ntwo\nthree\n", "read ok: two\n"]
    records = list(AuditLog(setup.home.path / "audit.jsonl").records())
    assert [(r.operation, r.decision, r.outcome) for r in records] == [
        ("fs/read_text_file", "allowed", "ok")
    ] * 2


ESCAPES = {
    "dot-dot": "{root}/../secret.txt",
    "absolute-outside": "{tmp}/secret.txt",
    "relative": "notes.txt",
    "a-sibling-sharing-the-prefix": "{root}-evil/secret.txt",
    "symlink-at-the-final-component": "{root}/link.txt",
    "symlink-at-an-ancestor": "{root}/up/secret.txt",
    "fifo": "{root}/pipe",
    "hard-link": "{root}/hard.txt",
}


async def test_every_escape_is_refused_and_audited(setup: Setup, tmp_path: Path):
    (setup.root / "link.txt").symlink_to(tmp_path / "secret.txt")
    (setup.root / "up").symlink_to(tmp_path)
    os.mkfifo(setup.root / "pipe")
    os.link(tmp_path / "secret.txt", setup.root / "hard.txt")
    (tmp_path / "root-evil").mkdir()
    (tmp_path / "root-evil" / "secret.txt").write_text("outside\n")
    paths = [p.format(root=setup.root, tmp=tmp_path) for p in ESCAPES.values()]
    async with setup.host() as host:
        events = await turn(session(host), [{"read": p} for p in paths])
    answers = dict(zip(ESCAPES, said(events), strict=True))
    assert {k: v.split(":")[0] for k, v in answers.items()} == dict.fromkeys(ESCAPES, "read error")
    records = list(AuditLog(setup.home.path / "audit.jsonl").records())
    assert [(r.decision, r.outcome) for r in records] == [("refused", "refused")] * len(ESCAPES)


def test_the_helm_home_is_refused_even_inside_a_root(tmp_path: Path):
    home = tmp_path / "root" / ".helm"
    home.mkdir(parents=True)
    (home / "credentials.json").write_text("{}")
    root = Root("Workspace", "ws", tmp_path / "root")
    rel = fsguard.locate(str(home / "credentials.json"), [root])[1]
    with pytest.raises(CallError, match="Helm's own folder"):
        fsguard.read_text(root, rel, home)
    the_home = Root("Workspace", "ws", home)
    with pytest.raises(CallError, match="the workspace 'ws' is Helm's own folder"):
        fsguard.read_text(the_home, fsguard.locate(str(home / "credentials.json"), [the_home])[1], home)


def test_a_new_file_that_appeared_since_the_diff_was_shown_is_a_conflict(tmp_path: Path):
    root = Root("Workspace", "ws", tmp_path)
    rel = fsguard.locate(str(tmp_path / "new.txt"), [root])[1]
    assert fsguard.current_text(root, rel, tmp_path / "home") is None
    (tmp_path / "new.txt").write_text("someone else's\n")
    with pytest.raises(CallError, match="appeared"):
        fsguard.create_file(root, rel, b"mine\n", tmp_path / "home")
    assert (tmp_path / "new.txt").read_text() == "someone else's\n"


def test_the_deepest_root_holds_a_path():
    outer = Root("Workspace", "ws", Path("/w"))
    inner = Root("Project", "p", Path("/w/p"))
    root, rel = fsguard.locate("/w/p/src/a.py", [outer, inner])
    assert (root.name, rel.text) == ("p", "src/a.py")


async def test_a_confirmed_write_shows_the_diff_and_replaces_the_file(setup: Setup):
    confirmer = ScriptedConfirmer(Decision.CONFIRMED)
    async with setup.host() as host:
        events = await turn(
            session(host, write=True, confirmer=confirmer),
            [{"write": str(setup.root / "notes.txt"), "content": "one\n2\nthree\n"}],
        )
    assert said(events) == ["write ok"]
    assert (setup.root / "notes.txt").read_text() == "one\n2\nthree\n"
    shown = confirmer.shown[0]
    assert shown.title == "Confirm file change"
    assert "-two\n+2\n" in (shown.diff or "")
    assert ("Path", "notes.txt") in shown.fields


async def test_an_agent_write_goes_through_the_write_pipeline_with_a_token_living_as_long_as_its_question(
    setup: Setup,
):
    async with setup.host() as host:
        valid: list[bool] = []

        async def confirm(summary: WriteSummary) -> Decision:
            valid.append(not host.writes.tokens.expired(summary.token))
            shown.append(summary)
            return Decision.CONFIRMED

        shown: list[WriteSummary] = []
        agent = session(host, write=True, confirmer=confirm)
        events = await turn(agent, [{"write": str(setup.root / "notes.txt"), "content": "1\n"}])
        (summary,) = shown
        assert host.writes.tokens.expired(summary.token)  # redeemed once: gone
    assert said(events) == ["write ok"]
    assert valid == [True]
    assert summary.expires_in == SHORT.question_timeout
    assert summary.requester == AgentRequester("ws", "scripted", agent.state.session_id)
    assert summary.who == "Agent scripted"
    records = list(AuditLog(setup.home.path / "audit.jsonl").records())
    assert [(r.requester, r.connection, r.kind, r.decision, r.outcome, r.file) for r in records] == [
        ("agent", "scripted", "files", "confirmed", "sending", "ws/notes.txt"),
        ("agent", "scripted", "files", "confirmed", "ok", "ws/notes.txt"),
    ]


async def test_a_confirmed_write_whose_decision_cannot_be_audited_writes_nothing(setup: Setup):
    (setup.home.path / "audit.jsonl").mkdir()  # the audit log cannot be written, not even by root
    async with setup.host() as host:
        events = await turn(
            session(host, write=True), [{"write": str(setup.root / "notes.txt"), "content": "changed\n"}]
        )
    (answer,) = said(events)
    assert answer.startswith("write error: the write to") and "audit log" in answer
    assert answer.endswith("nothing was written")
    assert (setup.root / "notes.txt").read_text() == "one\ntwo\nthree\n"


async def test_a_declined_write_answers_an_error_and_writes_nothing(setup: Setup):
    async with setup.host() as host:
        events = await turn(
            session(host, write=True, confirmer=ScriptedConfirmer(Decision.DECLINED)),
            [
                {"write": str(setup.root / "notes.txt"), "content": "changed\n"},
                {"write": str(setup.root / "new.txt"), "content": "new\n"},
            ],
        )
    assert all(s.startswith("write error: the user did not confirm the change") for s in said(events))
    assert (setup.root / "notes.txt").read_text() == "one\ntwo\nthree\n"
    assert not (setup.root / "new.txt").exists()
    records = list(AuditLog(setup.home.path / "audit.jsonl").records())
    assert [(r.decision, r.outcome) for r in records] == [("declined", "nothing sent")] * 2


async def test_a_confirmed_new_file_is_created(setup: Setup):
    async with setup.host() as host:
        events = await turn(
            session(host, write=True), [{"write": str(setup.root / "new.txt"), "content": "n\n"}]
        )
    assert said(events) == ["write ok"]
    assert (setup.root / "new.txt").read_text() == "n\n"
    assert [p.name for p in setup.root.iterdir() if p.name.startswith(".helm-write")] == []


async def test_without_write_a_write_is_refused_before_any_question(setup: Setup):
    confirmer = ScriptedConfirmer(Decision.CONFIRMED)
    async with setup.host() as host:
        events = await turn(
            session(host, confirmer=confirmer), [{"write": str(setup.root / "notes.txt"), "content": "x\n"}]
        )
    assert "does not allow changes to files" in said(events)[0]
    assert confirmer.shown == []
    assert (setup.root / "notes.txt").read_text() == "one\ntwo\nthree\n"


async def test_a_write_through_a_symlinked_folder_is_refused(setup: Setup, tmp_path: Path):
    (setup.root / "out").symlink_to(tmp_path)
    confirmer = ScriptedConfirmer(Decision.CONFIRMED)
    async with setup.host() as host:
        events = await turn(
            session(host, write=True, confirmer=confirmer),
            [{"write": str(setup.root / "out" / "secret.txt"), "content": "pwned\n"}],
        )
    assert said(events)[0].startswith("write error: Helm refused to write")
    assert (tmp_path / "secret.txt").read_text() == "outside\n"
    assert confirmer.shown == []
