"""The organisation's policy for coding agents, with the real scripted ACP agent: which agents
may start, whether they may change files, and whether "allow always" is offered."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from broker.errors import ProfileError
from broker.policy import decide
from tests.helpers import ScriptedConfirmer
from tests.unit.agents.agent_setup import FakeAsker, Setup, alive, make_setup, said, session, turn
from tests.unit.agents.test_agent_lifecycle import until
from tests.unit.policy.policy_setup import PolicyFile

WORDS = "refused by your organisation's policy"
OPTIONS = [
    ["once", "Allow", "allow_once"],
    ["always", "Always", "allow_always"],
    ["no", "Reject", "reject_once"],
]


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    s = make_setup(tmp_path)
    s.add_agent()
    (s.root / "notes.txt").write_text("one\n", encoding="utf-8")
    return s


def ask(kind: str = "execute") -> dict[str, object]:
    return {"ask": {"id": "t1", "title": "Run the tests", "kind": kind, "options": OPTIONS}}


async def test_an_agent_the_policy_does_not_allow_never_starts(setup: Setup, policy: PolicyFile):
    policy.write({"agents": {"allow": [{"package": "claude-code"}]}})
    async with setup.host() as host:
        with pytest.raises(ProfileError, match=rf"{WORDS} \(agents\.allow\): agent 'scripted' is not one"):
            session(host)


async def test_an_agent_allowed_by_its_executable_runs(setup: Setup, policy: PolicyFile):
    policy.write({"agents": {"allow": [{"command": sys.executable}]}})
    async with setup.host() as host:
        events = await turn(session(host), [{"read": str(setup.root / "notes.txt")}])
    assert said(events) == ["read ok: one\n"]


async def test_a_policy_that_arrives_during_a_session_refuses_the_next_request(
    setup: Setup, policy: PolicyFile
):
    asker = FakeAsker(lambda q: "once")
    async with setup.host() as host:
        running = session(host, asker=asker)
        assert said(await turn(running, [ask()])) == ["permission: selected once"]
        policy.write({"agents": {"allow": [{"package": "codex"}]}})
        events = await turn(running, [ask(), {"read": str(setup.root / "notes.txt")}])
    assert said(events)[0] == "permission: selected no"  # refused without asking the user
    assert said(events)[1].startswith("read error:") and "(agents.allow)" in said(events)[1]
    assert len(asker.asked) == 1


async def test_agents_may_not_change_files_when_the_policy_says_so(setup: Setup, policy: PolicyFile):
    policy.write({"agents": {"write": False}})
    confirmer, asker = ScriptedConfirmer(), FakeAsker(lambda q: "once")
    async with setup.host() as host:
        events = await turn(
            session(host, write=True, asker=asker, confirmer=confirmer),
            [ask("edit"), {"write": str(setup.root / "notes.txt"), "content": "two\n"}, ask("execute")],
        )
    edit, write, execute = said(events)
    assert edit == "permission: selected no"
    assert (
        write.startswith("write error:") and f"{WORDS} (agents.write): agents may not change files" in write
    )
    assert execute == "permission: selected once"  # what is not a change is still the user's to decide
    assert confirmer.shown == [] and (setup.root / "notes.txt").read_text() == "one\n"


async def test_allow_always_is_never_offered_when_the_policy_takes_it_away(setup: Setup, policy: PolicyFile):
    policy.write({"agents": {"allow_always": False}})
    asker = FakeAsker(lambda q: "always")
    async with setup.host() as host:
        events = await turn(session(host, asker=asker), [ask(), ask()])
    assert [o.kind for o in asker.asked[0].options] == ["allow_once", "reject_once"]
    assert said(events) == ["permission: selected no"] * 2  # "always" is not an answer it can give
    assert len(asker.asked) == 2


def test_a_catalogue_adapter_is_known_by_helms_own_launcher_only():
    launcher = [*decide.helm_command(), "agent", "start-adapter", "claude-code", "--home", "/h"]
    assert decide.adapter_of(launcher) == "claude-code"
    assert decide.adapter_of(["/usr/bin/evil", "agent", "start-adapter", "claude-code"]) is None


async def test_a_warm_agent_the_policy_no_longer_allows_is_stopped(setup: Setup, policy: PolicyFile):
    async with setup.host() as host:
        first = session(host)
        pid = int(said(await turn(first, [{"pid": 1}]))[0].split()[1])
        await first.close()
        assert host.warm == 1 and alive(pid)
        policy.write({"agents": {"allow": [{"package": "codex"}]}})
        assert await host.stop_forbidden() == ("scripted",)
        assert host.warm == 0
        await until(lambda: not alive(pid))
        assert await host.stop_forbidden() == ()


async def test_a_running_agent_the_policy_no_longer_allows_is_stopped_and_not_kept_warm(
    setup: Setup, policy: PolicyFile
):
    async with setup.host() as host:
        running = session(host)
        busy = asyncio.create_task(turn(running, [{"say": "working"}, {"pause": 60}]))
        await until(lambda: running.busy and running.id is not None, 30)
        policy.write({"agents": {"allow": [{"package": "codex"}]}})
        assert await host.stop_forbidden() == ("scripted",)
        events = await asyncio.wait_for(busy, 30)
        assert "working" in said(events)
        assert host.warm == 0
