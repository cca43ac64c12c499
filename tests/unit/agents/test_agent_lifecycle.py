"""An agent's life: its process, start-up deadline, crashes, floods, cancel, warm reuse, load."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from broker.agents import AgentFailed, AgentQuiet, Limits, SessionStarted, TurnEnded
from broker.agents.flow import MAX_EVENTS
from broker.agents.tree import MARK_VARIABLE
from broker.childenv import safe_environment
from broker.errors import SettingsError
from tests.unit.agents.agent_setup import KEY, SHORT, Setup, alive, make_setup, reaped, said, session, turn


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return make_setup(tmp_path)


def live_in_group(pgid: int) -> list[int]:
    """Processes of the group that are still running (zombies waiting to be reaped are not)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            found.append(int(name))
    return found


async def until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    async with asyncio.timeout(seconds):
        while not condition():
            await asyncio.sleep(0.02)


def pid_of(events: list) -> int:
    return int(next(s for s in said(events) if s.startswith("pid ")).split()[1])


async def test_the_agent_runs_in_its_own_group_in_the_root_with_the_safe_environment_and_its_key(
    setup: Setup,
):
    setup.add_agent(key=KEY)
    async with setup.host() as host:
        events = await turn(session(host), [{"env": 1}, {"env_sha256": "AGENT_KEY"}, {"cwd": 1}, {"pid": 1}])
    env, key_digest, cwd, ids = said(events)
    variables = json.loads(env)
    assert key_digest == hashlib.sha256(KEY.encode()).hexdigest()
    assert variables.pop("AGENT_KEY") == "[key removed]"  # what the agent says is scrubbed too
    assert len(variables.pop(MARK_VARIABLE)) == 32  # the mark that finds what it starts
    assert set(variables) == set(safe_environment())
    assert cwd == str(setup.root)
    _, pid, _, pgid = ids.split()
    assert pid == pgid


async def test_a_flood_of_updates_is_held_back_and_nothing_is_lost(setup: Setup):
    setup.add_agent()
    chunks = 0
    async with setup.host() as host:
        s = session(host)
        stream = s.run(json.dumps([{"flood": 3000}]))
        assert isinstance(await anext(stream), SessionStarted)
        flow = s._flow  # the consumer stalls: the agent must block, not Helm's memory grow
        assert flow is not None
        await until(lambda: flow.high_water >= MAX_EVENTS)
        async with asyncio.timeout(30):
            async for event in stream:
                chunks += event.type == "message"
        await s.close()
    assert chunks == 3000
    assert flow.high_water <= MAX_EVENTS


async def test_an_agent_quiet_for_longer_than_the_limit_is_said_to_be_quiet_and_the_turn_goes_on(
    setup: Setup,
):
    setup.add_agent()
    async with setup.host(replace(SHORT, quiet_after=0.5)) as host:
        events = await turn(session(host), [{"say": "start"}, {"pause": 1.6}, {"say": "done"}])
    kinds = [e.type for e in events]
    quiet = [e for e in events if isinstance(e, AgentQuiet)]
    assert quiet, kinds
    assert kinds.index("quiet") > kinds.index("message")  # after "start", before "done"
    assert said(events) == ["start", "done"]
    assert all(q.agent == "scripted" and q.seconds >= 0 for q in quiet)
    assert [q.seconds for q in quiet] == sorted(q.seconds for q in quiet)
    assert isinstance(events[-1], TurnEnded)


async def test_an_oversized_message_ends_the_session_with_a_clear_error(setup: Setup):
    setup.add_agent()
    async with setup.host() as host:
        events = await turn(session(host), [{"big_line": 5 * 1024 * 1024}])
    failed = events[-1]
    assert isinstance(failed, AgentFailed)
    assert "larger than 4 MiB" in failed.message


async def test_an_agent_that_hangs_at_start_up_fails_at_the_deadline_with_its_stderr(setup: Setup):
    setup.add_agent("scripted", "--hang-at-start")
    async with setup.host(replace(SHORT, startup=3.0)) as host:
        events = await turn(session(host), [{"say": "never"}])
    failed = events[-1]
    assert isinstance(failed, AgentFailed)
    assert "did not start within 3 s" in failed.message
    assert "starting slowly" in failed.stderr_tail
    assert failed.exit_code is not None


async def test_a_crash_mid_turn_carries_the_exit_code_and_the_stderr_tail_without_the_key(setup: Setup):
    setup.add_agent(key=KEY)
    noise = "x" * 10_000 + "\n"
    async with setup.host() as host:
        events = await turn(
            session(host), [{"say": "working"}, {"crash": 3, "stderr": noise + f"boom {KEY}\n"}]
        )
    failed = events[-1]
    assert said(events) == ["working"]
    assert isinstance(failed, AgentFailed)
    assert failed.exit_code == 3
    assert failed.stderr_tail.endswith("boom [key removed]\n")
    assert KEY not in failed.stderr_tail
    assert len(failed.stderr_tail.encode()) <= 4096


@pytest.mark.parametrize(
    ("ignore_term", "exit_code"),
    [pytest.param(False, -15, id="sigterm"), pytest.param(True, -9, id="sigkill")],
)
async def test_an_agent_that_ignores_cancel_is_ended_with_its_whole_group(
    setup: Setup, ignore_term: bool, exit_code: int
):
    setup.add_agent()
    async with setup.host() as host:
        s = session(host)
        events = []
        async with asyncio.timeout(30):
            async for event in s.run(
                json.dumps([{"pid": 1}, {"hang": {"child": True, "ignore_term": ignore_term}}])
            ):
                events.append(event)
                if said(events)[-1:] and said(events)[-1].startswith("child"):
                    await s.cancel()
        await s.close()
    failed = events[-1]
    assert isinstance(failed, AgentFailed)
    assert failed.message == "the agent did not stop after cancel; Helm ended it"
    assert failed.exit_code == exit_code
    await until(lambda: live_in_group(pid_of(events)) == [])


def daemon_of(events: list) -> int:
    return int(next(s for s in said(events) if s.startswith("daemon ")).split()[1])


async def test_a_grandchild_that_leaves_the_group_and_the_tree_does_not_outlive_the_session(setup: Setup):
    setup.add_agent()
    with reaped([]) as pids:
        async with setup.host() as host:
            s = session(host)
            events = await turn(s, [{"daemon": {}}, {"say": "done"}])
            pids.append(daemon_of(events))
            assert alive(pids[0])  # it runs in a session of its own, outside the agent's group
            await s.close()
        assert events[-1] == TurnEnded("end_turn")
        await until(lambda: not alive(pids[0]))


async def test_an_agent_that_died_while_a_grandchild_holds_its_stdout_ends_its_turn(setup: Setup):
    setup.add_agent()
    with reaped([]) as pids:
        async with setup.host() as host:
            s = session(host)
            events = await turn(s, [{"daemon": {"hold": True}}, {"crash": 5, "stderr": "gone\n"}])
            pids.append(daemon_of(events))
            await s.close()
        failed = events[-1]
        assert isinstance(failed, AgentFailed)
        assert failed.exit_code == 5
        await until(lambda: not alive(pids[0]))


async def test_a_polite_cancel_ends_the_turn_and_the_session_goes_on(setup: Setup):
    setup.add_agent()
    async with setup.host() as host:
        s = session(host)
        events = []
        async with asyncio.timeout(30):
            async for event in s.run(json.dumps([{"wait_cancel": 1}])):
                events.append(event)
                if said(events) == ["waiting for cancel\n"]:
                    await s.cancel()
        after = await turn(s, [{"say": "still here"}])
    assert events[-1] == TurnEnded("cancelled")
    assert said(after) == ["still here"]


async def test_a_closed_session_leaves_its_agent_warm_for_the_next_one_until_the_idle_grace(setup: Setup):
    setup.add_agent()
    (setup.root / "p").mkdir()
    from broker.workspaces import add_project

    add_project(setup.home, "ws", "p", setup.root / "p")
    async with setup.host(replace(SHORT, idle_grace=0.5)) as host:
        first = session(host)
        pid = pid_of(await turn(first, [{"pid": 1}]))
        await first.close()
        assert host.warm == 1
        second = session(host)
        again = pid_of(await turn(second, [{"pid": 1}]))
        await second.close()
        elsewhere = session(host, projects=("p",))
        other = pid_of(await turn(elsewhere, [{"pid": 1}]))
        await elsewhere.close()
        assert again == pid
        assert other != pid
        await until(lambda: host.warm == 0 and live_in_group(pid) == [] and live_in_group(other) == [])


async def test_a_past_session_is_loaded_and_a_stale_one_falls_back_to_a_new_session(
    setup: Setup, tmp_path: Path
):
    state = tmp_path / "agent-state"
    state.mkdir()
    setup.add_agent("scripted", "--load", "--state", str(state))
    async with setup.host() as host:
        first = await turn(session(host), [{"say": "remember me"}])
    sid = first[0].session_id
    async with setup.host() as host:
        loaded = await turn(session(host, resume=sid), [{"say": "back"}])
        stale = await turn(session(host, resume="no-such-session"), [{"say": "fresh"}])
    started = next(e for e in loaded if isinstance(e, SessionStarted))
    assert (started.session_id, started.resumed) == (sid, True)
    assert said(loaded) == [f"history of {sid}", "back"]
    restarted = stale[0]
    assert isinstance(restarted, SessionStarted)
    assert not restarted.resumed
    assert "could not be loaded" in restarted.note
    assert said(stale) == ["fresh"]


async def test_an_agent_that_cannot_load_sessions_starts_a_new_one_and_says_so(setup: Setup):
    setup.add_agent()
    async with setup.host() as host:
        events = await turn(session(host, resume="old"), [{"say": "hi"}])
    assert "cannot load past sessions" in events[0].note


def test_the_start_up_deadline_comes_from_the_environment():
    assert Limits.from_env({"HELM_ACP_STARTUP_TIMEOUT": "2.5"}).startup == 2.5
    assert Limits.from_env({}).startup == 60.0
    for bad in ("0", "-1", "soon", "nan", "99999"):
        with pytest.raises(SettingsError, match="HELM_ACP_STARTUP_TIMEOUT"):
            Limits.from_env({"HELM_ACP_STARTUP_TIMEOUT": bad})
