"""``$orchestrate`` on the real broker: what is refused before the user is ever asked."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from app.commands.ext import format_review
from broker import Broker, CallContext
from broker.context import AgentRequester
from broker.errors import AgentError, CallError, ErrorCode
from broker.orchestrate.builds import Build, BuildAnswer, BuildPlan, BuildQuestion
from broker.orchestrate.kind import CONNECTION, OrchestrateKind
from broker.workspaces import add_project
from tests.helpers import ScriptedConfirmer, manifest_dict, new_broker, setup_extension
from tests.unit.policy.policy_setup import PolicyFile, policy

__all__ = ["policy"]  # the fixture

FILES = {"id": "sp", "kind": "files", "root": "project", "paths": ["*.md"], "operations": ["read", "write"]}
DB = {"id": "db", "kind": "db", "service": "main", "engine": "sqlite",
      "queries": {"drop": {"sql": "DELETE FROM tasks", "write": True}}}  # fmt: skip
SECTION = {"prompt": "Build {task} in {project}", "root": "project", "write": True}


class Asker:
    """The user, never asked in these tests (each call is refused first)."""

    def __init__(self) -> None:
        self.asked: list[BuildQuestion] = []

    async def __call__(self, question: BuildQuestion) -> BuildAnswer:
        self.asked.append(question)
        return BuildAnswer.CANCEL


class Runner:
    started: list[BuildPlan] = []

    async def start(self, plan: BuildPlan, build: Build) -> None:
        self.started.append(plan)


def board(**extra: Any) -> dict[str, Any]:
    raw = manifest_dict(
        [FILES], kind="tool", permissions={"write": True, "orchestrate": True}, orchestrate=SECTION
    )
    raw.update(extra)
    return raw


async def ready(broker: Broker, tmp_path: Path, raw: dict[str, Any], *, agent: bool = True) -> CallContext:
    ctx = await setup_extension(broker, tmp_path, raw)
    (tmp_path / "site").mkdir()
    add_project(broker.home, "ws", "site", tmp_path / "site")
    if agent:
        with broker.home.update() as settings:
            settings.agents["claude"] = {
                "command": ["claude-code-acp"],
                "key_env": None,
                "allow_reads": False,
            }
            settings.workspace("ws").build_agent = "claude"
    return ctx


GOOD = {"input": {"task": "T-1", "project": "site"}}


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        pytest.param({"input": {"task": "T-1"}}, "refused", "lacks 'project'", id="placeholder"),
        pytest.param({"input": {"task": "T-1", "project": "nope"}}, "refused", "input.project", id="project"),
        pytest.param({"input": "T-1"}, "refused", "the build's input must be a JSON object",
                     id="input-not-object"),
        pytest.param({**GOOD, "orWrite": {"connection": "sp", "operation": "read", "args": {}}}, "refused",
                     "not a write", id="or-write-read"),
        pytest.param({**GOOD, "orWrite": {"connection": "gh", "operation": "x"}}, "refused", "not declared",
                     id="or-write-undeclared"),
        pytest.param({**GOOD, "orWrite": {"connection": "sp", "operation": "write", "label": "x" * 41}},
                     "refused", "label", id="label-too-long"),
        pytest.param({**GOOD, "orWrite": {"connection": "sp", "operation": "write", "label": " cancel "}},
                     "refused", "Helm's own", id="label-cancel"),
        pytest.param({**GOOD, "orWrite": {"connection": "sp", "operation": "write", "label": "Start  Build"}},
                     "refused", "Helm's own", id="label-start-build"),
        pytest.param({**GOOD, "orWrite": {"connection": "sp", "operation": "write",
                                          "label": "Move and start build"}},
                     "refused", "Helm's own", id="label-both"),
        pytest.param({**GOOD, "orWrite": {"connection": "sp", "operation": "write", "label": "Close"}},
                     "refused", "Helm's own", id="label-close"),
    ],
)  # fmt: skip
async def test_a_build_that_would_be_refused_is_refused_before_the_user_is_asked(
    tmp_path: Path, args: dict[str, Any], code: str, words: str
) -> None:
    asker = Asker()
    async with new_broker(tmp_path / "home") as broker:
        ctx = await ready(broker, tmp_path, board())
        broker.builtins[CONNECTION] = OrchestrateKind(broker, asker, Runner())
        result = await broker.request(ctx, CONNECTION, "build", args, ScriptedConfirmer())
        records = list(broker.audit.records())
    assert result["ok"] is False and result["error"]["code"] == code
    assert words in result["error"]["message"]
    assert asker.asked == [] and records == []


async def test_without_a_build_agent_the_user_is_told_where_to_choose_one(tmp_path: Path) -> None:
    asker = Asker()
    async with new_broker(tmp_path / "home") as broker:
        ctx = await ready(broker, tmp_path, board(), agent=False)
        broker.builtins[CONNECTION] = OrchestrateKind(broker, asker, Runner())
        result = await broker.request(ctx, CONNECTION, "build", GOOD, ScriptedConfirmer())
    assert result["error"]["code"] == "not_configured"
    assert "helm workspace build-agent ws AGENT" in result["error"]["message"]
    assert asker.asked == []


@pytest.mark.parametrize(
    "section",
    [
        pytest.param({**SECTION, "prompt": "Delete {task} in {project}"}, id="prompt"),
        pytest.param({**SECTION, "root": "workspace"}, id="root"),
        pytest.param({**SECTION, "write": False}, id="write"),
        pytest.param({"prompt": SECTION["prompt"], "root": "project"}, id="write-left-out"),
    ],
)
async def test_a_tool_whose_build_changed_cannot_start_builds_until_approved_again(
    tmp_path: Path, section: dict[str, Any]
) -> None:
    asker = Asker()
    async with new_broker(tmp_path / "home") as broker:
        ctx = await ready(broker, tmp_path, board())
        broker.builtins[CONNECTION] = OrchestrateKind(broker, asker, Runner())
        changed = board(orchestrate=section)
        manifest = broker.home.settings().workspace("ws").extensions[ctx.extension].path / "manifest.json"
        manifest.write_text(json.dumps(changed), encoding="utf-8")
        result = await broker.request(ctx, CONNECTION, "build", GOOD, ScriptedConfirmer())
    assert result["error"]["code"] == "refused" and "changed" in result["error"]["message"]
    assert asker.asked == []


async def test_a_build_agent_the_organisation_does_not_allow_is_refused_before_the_user_is_asked(
    tmp_path: Path, policy: PolicyFile
) -> None:
    asker, runner = Asker(), Runner()
    async with new_broker(tmp_path / "home") as broker:
        ctx = await ready(broker, tmp_path, board())
        broker.builtins[CONNECTION] = OrchestrateKind(broker, asker, runner)
        policy.write({"agents": {"allow": [{"package": "codex"}]}})
        result = await broker.request(ctx, CONNECTION, "build", GOOD, ScriptedConfirmer())
    assert result["ok"] is False and result["error"]["code"] == "refused"
    assert "organisation's policy (agents.allow): agent 'claude' is not one" in result["error"]["message"]
    assert asker.asked == [] and runner.started == []


async def test_builds_start_only_in_the_window_and_status_knows_no_other_build(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        ctx = await ready(broker, tmp_path, board())
        broker.builtins[CONNECTION] = OrchestrateKind(broker)  # as on the command line
        cli = await broker.request(ctx, CONNECTION, "build", GOOD, ScriptedConfirmer())
        status = await broker.request(ctx, CONNECTION, "status", {"session": "build-x"}, ScriptedConfirmer())
        odd = await broker.request(ctx, CONNECTION, "delete", {}, ScriptedConfirmer())
    assert cli["error"]["code"] == "unavailable" and "Helm's window" in cli["error"]["message"]
    assert status["error"]["code"] == "refused"
    assert odd["error"]["code"] == "refused"


def test_the_terminal_review_shows_the_build(tmp_path: Path) -> None:
    from broker.manifest import Manifest

    text = format_review(Manifest(board(), tmp_path).review())
    assert "Prompt template: Build {task} in {project}" in text
    assert "Runs in: the project the tool names (input.project)" in text


async def test_status_of_an_unknown_or_another_extensions_build_says_the_same_refusal(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        ctx = await ready(broker, tmp_path, board())
        kind = OrchestrateKind(broker, Asker(), Runner())
        broker.builtins[CONNECTION] = kind
        own, other, elsewhere = (
            Build("ws", ctx.extension),
            Build("ws", "com.example.other"),
            Build("ws2", ctx.extension),
        )
        for build in (own, other, elsewhere):
            kind.builds.add(build)
        answers = {}
        for name, session in (("unknown", "build-nope"), ("other", other.id), ("elsewhere", elsewhere.id)):
            result = await broker.request(
                ctx, CONNECTION, "status", {"session": session}, ScriptedConfirmer()
            )
            answers[name] = json.dumps(result).replace(session, "ID")
        mine = await broker.request(ctx, CONNECTION, "status", {"session": own.id}, ScriptedConfirmer())
    assert mine["ok"] is True and mine["data"] == {"session": own.id, "state": "running"}
    assert answers["unknown"] == answers["other"] == answers["elsewhere"]
    assert '"code": "refused"' in answers["unknown"]


class Answering:
    """The user, giving one answer to every Start build dialog."""

    def __init__(self, answer: BuildAnswer) -> None:
        self.answer = answer
        self.asked: list[BuildQuestion] = []

    async def __call__(self, question: BuildQuestion) -> BuildAnswer:
        self.asked.append(question)
        return self.answer


class Starting:
    """The Agents tab: records each build it starts, or cannot start any."""

    def __init__(self, fails: bool = False) -> None:
        self.fails = fails
        self.started: list[tuple[BuildPlan, Build]] = []

    async def start(self, plan: BuildPlan, build: Build) -> None:
        if self.fails:
            raise AgentError("the Agents tab is running another turn")
        self.started.append((plan, build))


TASK = "T.md"


def move(tmp_path: Path, expected: str | None = None, label: str = " Move\n to   doing ") -> dict[str, Any]:
    sha = expected or hashlib.sha256((tmp_path / "site" / TASK).read_bytes()).hexdigest()
    args = {"project": "site", "path": TASK, "text": "status: doing\n", "expected_sha256": sha}
    return {"connection": "sp", "operation": "write", "args": args, "label": label}


async def answered(
    tmp_path: Path, answer: BuildAnswer, *, runner: Starting | None = None, **args: Any
) -> tuple[dict[str, Any], Answering, Starting, list[tuple[str, str, str]]]:
    asker, runner = Answering(answer), runner or Starting()
    async with new_broker(tmp_path / "home") as broker:
        ctx = await ready(broker, tmp_path, board())
        (tmp_path / "site" / TASK).write_text("status: ready\n", encoding="utf-8")
        if "orWrite" in args and args["orWrite"] is True:
            args["orWrite"] = move(tmp_path)
        broker.builtins[CONNECTION] = OrchestrateKind(broker, asker, runner)
        result = await broker.request(ctx, CONNECTION, "build", {**GOOD, **args}, ScriptedConfirmer())
        records = [(r.kind, r.decision, r.outcome) for r in broker.audit.records()]
    return result, asker, runner, records


@pytest.mark.parametrize(
    ("answer", "code", "outcome"),
    [
        pytest.param(BuildAnswer.BUILD, None, [("orchestrate", "confirmed", "starting"),
                                               ("orchestrate", "confirmed", "started")], id="start"),
        pytest.param(BuildAnswer.CANCEL, "declined", [("orchestrate", "declined", "nothing started")],
                     id="cancel"),
        pytest.param(BuildAnswer.EXPIRED, "declined", [("orchestrate", "expired", "nothing started")],
                     id="expired"),
    ],
)  # fmt: skip
async def test_a_build_alone_starts_only_on_start_and_each_answer_is_audited(
    tmp_path: Path, answer: BuildAnswer, code: str | None, outcome: list[tuple[str, str, str]]
) -> None:
    result, asker, runner, records = await answered(tmp_path, answer)
    (question,) = asker.asked
    assert question.write is None and question.answers() == (BuildAnswer.CANCEL, BuildAnswer.BUILD)
    plan = question.plan
    assert plan.prompt == "Build T-1 in site" and plan.project == "site" and plan.write is True
    assert plan.folder == tmp_path / "site" and plan.agent == "claude"
    assert records == outcome
    if code is None:
        (started,) = runner.started
        assert result == {"ok": True, "data": {"session": started[1].id}, "error": None}
        assert started[0] == plan
        assert started[1].state == "running"
    else:
        assert result["error"]["code"] == code and runner.started == []


@pytest.mark.parametrize(
    ("answer", "code", "moved", "builds", "built"),
    [
        pytest.param(BuildAnswer.CANCEL, "declined", False, False, ["declined/nothing started"], id="cancel"),
        pytest.param(BuildAnswer.EXPIRED, "confirmation_required", False, False, ["expired/nothing started"],
                     id="expired"),
        pytest.param(BuildAnswer.BUILD, None, False, True, ["confirmed/starting", "confirmed/started"],
                     id="build"),
        pytest.param(BuildAnswer.WRITE, None, True, False, ["declined/nothing started"], id="write"),
        pytest.param(BuildAnswer.BOTH, None, True, True, ["confirmed/starting", "confirmed/started"],
                     id="both"),
    ],
)  # fmt: skip
async def test_each_answer_beside_a_write_writes_and_builds_as_it_says(
    tmp_path: Path, answer: BuildAnswer, code: str | None, moved: bool, builds: bool, built: list[str]
) -> None:
    result, asker, runner, records = await answered(tmp_path, answer, orWrite=True)
    (question,) = asker.asked
    assert question.label == "Move to doing" and question.write is not None
    assert question.write.kind == "files" and question.write.connection == "sp"
    assert ((tmp_path / "site" / TASK).read_text() == "status: doing\n") is moved
    assert (len(runner.started) == 1) is builds
    assert [f"{d}/{o}" for k, d, o in records if k == "orchestrate"] == built
    writes = [(d, o) for k, d, o in records if k == "files"]
    assert writes == ([("confirmed", "sending"), ("confirmed", "ok")] if moved else [(answer.value
        if answer is BuildAnswer.EXPIRED else "declined", "nothing sent")])  # fmt: skip
    if code is not None:
        assert result["ok"] is False and result["error"]["code"] == code and result["data"] is None
        return
    assert result["ok"] is True
    write = result["data"]["write"]
    assert write["ok"] is moved and (moved or write["error"]["code"] == "declined")
    assert ("session" in result["data"]) is builds
    if builds:
        assert result["data"]["session"] == runner.started[0][1].id


async def test_a_failed_write_starts_no_build_and_says_why(tmp_path: Path) -> None:
    asker, runner = Answering(BuildAnswer.BOTH), Starting()
    async with new_broker(tmp_path / "home") as broker:
        ctx = await ready(broker, tmp_path, board())
        (tmp_path / "site" / TASK).write_text("status: ready\n", encoding="utf-8")
        broker.builtins[CONNECTION] = OrchestrateKind(broker, asker, runner)
        args = {**GOOD, "orWrite": move(tmp_path, expected="0" * 64)}
        result = await broker.request(ctx, CONNECTION, "build", args, ScriptedConfirmer())
        records = [(r.kind, r.decision, r.outcome) for r in broker.audit.records()]
    assert result["ok"] is False and result["error"]["code"] == "conflict"
    assert result["data"]["write"]["error"]["code"] == "conflict" and runner.started == []
    assert records[-1] == ("orchestrate", "confirmed", "nothing started: the write failed")


@pytest.mark.parametrize("beside", [False, True], ids=["build", "both"])
async def test_a_build_the_agents_tab_cannot_start_is_unavailable_and_recorded(
    tmp_path: Path, beside: bool
) -> None:
    extra: dict[str, Any] = {"orWrite": True} if beside else {}
    answer = BuildAnswer.BOTH if beside else BuildAnswer.BUILD
    result, _asker, _runner, records = await answered(tmp_path, answer, runner=Starting(fails=True), **extra)
    assert result["ok"] is False and result["error"]["code"] == "unavailable"
    assert "could not start: the Agents tab is running another turn" in result["error"]["message"]
    assert [(d, o) for k, d, o in records if k == "orchestrate"] == [("confirmed", "starting"),
                                                                   ("confirmed", "not started")]  # fmt: skip
    if beside:
        assert result["data"]["write"]["ok"] is True
    else:
        assert result["data"] is None


async def test_status_needs_a_session_text_and_an_extension_frame(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        ctx = await ready(broker, tmp_path, board())
        kind = OrchestrateKind(broker, Asker(), Runner())
        agent = CallContext.of(AgentRequester("ws", "claude", "s1"))
        kind.builds.add(build := Build("ws", agent.extension))
        with pytest.raises(CallError, match="needs the session a build returned"):
            kind.status(ctx, {"session": 3})
        with pytest.raises(CallError, match="no build") as caught:
            kind.status(agent, {"session": build.id})
    assert caught.value.code is ErrorCode.REFUSED


@pytest.mark.parametrize(
    ("window", "code", "words"),
    [
        pytest.param("agent", "refused", "only a tool extension", id="an-agent-asks"),
        pytest.param("asker-only", "unavailable", "Helm's window", id="no-runner"),
        pytest.param("runner-only", "unavailable", "Helm's window", id="no-asker"),
        pytest.param("no-workspace", "not_configured", "workspace", id="workspace-gone"),
        pytest.param("no-build", "refused", "declares no build", id="no-orchestrate"),
        pytest.param(
            "ghost-agent", "not_configured", "'ghost' that runs builds is not set up", id="agent-gone"
        ),
        pytest.param("odd-agent", "not_configured", "unknown setting(s) colour", id="agent-odd"),
    ],
)
async def test_a_build_nobody_could_answer_or_run_is_refused_before_the_user_is_asked(
    tmp_path: Path, window: str, code: str, words: str
) -> None:
    asker, runner = Asker(), Runner()
    async with new_broker(tmp_path / "home") as broker:
        raw = (
            manifest_dict([FILES], kind="tool", permissions={"write": True})
            if window == "no-build"
            else board()
        )
        ctx = await ready(broker, tmp_path, raw)
        broker.builtins[CONNECTION] = OrchestrateKind(
            broker, None if window == "runner-only" else asker, None if window == "asker-only" else runner
        )
        if window == "agent":
            ctx = CallContext.of(AgentRequester("ws", "claude", "s1"))
        elif window == "no-workspace":
            ctx = CallContext("elsewhere", ctx.extension, ctx.instance)
        elif window == "ghost-agent":
            with broker.home.update() as settings:
                settings.workspace("ws").build_agent = "ghost"
        elif window == "odd-agent":
            with broker.home.update() as settings:
                settings.agents["claude"]["colour"] = "red"
        result = await broker.request(ctx, CONNECTION, "build", GOOD, ScriptedConfirmer())
    assert result["ok"] is False and result["error"]["code"] == code
    assert words in result["error"]["message"]
    assert asker.asked == []


@pytest.mark.parametrize(
    ("or_write", "words"),
    [
        pytest.param("tasks", "orWrite must be", id="not-an-object"),
        pytest.param({"operation": "write", "args": {}}, "connection and operation", id="no-connection"),
        pytest.param({"connection": "sp", "args": {}}, "connection and operation", id="no-operation"),
        pytest.param({"connection": "sp", "operation": "write", "args": []}, "args must be", id="args-list"),
        pytest.param({"connection": "db", "operation": "drop", "args": {}}, "files, http or mcp write only",
                     id="a-db-write"),
    ],
)  # fmt: skip
async def test_an_or_write_that_is_no_declared_files_http_or_mcp_write_is_refused(
    tmp_path: Path, or_write: Any, words: str
) -> None:
    asker = Asker()
    async with new_broker(tmp_path / "home") as broker:
        ctx = await ready(broker, tmp_path, board(connections=[FILES, DB]))
        broker.builtins[CONNECTION] = OrchestrateKind(broker, asker, Runner())
        result = await broker.request(
            ctx, CONNECTION, "build", {**GOOD, "orWrite": or_write}, ScriptedConfirmer()
        )
    assert result["ok"] is False and result["error"]["code"] == "refused", result
    assert words in result["error"]["message"]
    assert asker.asked == []


async def test_a_build_in_the_workspace_root_runs_there_with_no_project(tmp_path: Path) -> None:
    asker = Answering(BuildAnswer.CANCEL)
    async with new_broker(tmp_path / "home") as broker:
        ctx = await ready(broker, tmp_path, board(orchestrate={"prompt": "Tidy {task}", "root": "workspace"}))
        broker.builtins[CONNECTION] = OrchestrateKind(broker, asker, Runner())
        await broker.request(ctx, CONNECTION, "build", {"input": {"task": "T-1"}}, ScriptedConfirmer())
        root = broker.home.settings().workspace("ws").root
    (question,) = asker.asked
    assert (question.plan.project, question.plan.folder, question.plan.write) == (None, root, False)
    assert question.plan.prompt == "Tidy T-1"


async def test_a_build_whose_start_cannot_be_recorded_does_not_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = Starting()
    async with new_broker(tmp_path / "home") as broker:
        ctx = await ready(broker, tmp_path, board())
        broker.builtins[CONNECTION] = OrchestrateKind(broker, Answering(BuildAnswer.BUILD), runner)

        def full_disk(record: object) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(broker.audit, "record", full_disk)
        result = await broker.request(ctx, CONNECTION, "build", GOOD, ScriptedConfirmer())
    assert result["ok"] is False and result["error"]["code"] == "unavailable"
    assert "cannot write its audit log; the build was not started" in result["error"]["message"]
    assert runner.started == []


async def test_a_started_build_answers_its_status(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        ctx = await ready(broker, tmp_path, board())
        broker.builtins[CONNECTION] = OrchestrateKind(broker, Answering(BuildAnswer.BUILD), Starting())
        session = (await broker.request(ctx, CONNECTION, "build", GOOD, ScriptedConfirmer()))["data"][
            "session"
        ]
        status = await broker.request(ctx, CONNECTION, "status", {"session": session}, ScriptedConfirmer())
    assert status["data"] == {"session": session, "state": "running"}


class Waiting:
    """The user, who has not answered yet."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()

    async def __call__(self, question: BuildQuestion) -> BuildAnswer:
        self.asked.set()
        await asyncio.Event().wait()
        raise AssertionError("never answered")


@pytest.mark.parametrize("how", ["stopped", "cancelled"])
async def test_a_build_call_ended_with_its_dialog_open_is_recorded_and_starts_nothing(
    tmp_path: Path, how: str
) -> None:
    asker, runner = Waiting(), Starting()
    async with new_broker(tmp_path / "home") as broker:
        ctx = await ready(broker, tmp_path, board())
        broker.builtins[CONNECTION] = OrchestrateKind(broker, asker, runner)
        call = asyncio.ensure_future(broker.request(ctx, CONNECTION, "build", GOOD, ScriptedConfirmer()))
        await asyncio.wait_for(asker.asked.wait(), 5)
        if how == "stopped":
            broker.activity.stop("ws", ctx.extension)
            result = await asyncio.wait_for(call, 5)
            assert result["error"]["code"] == "refused" and "stopped" in result["error"]["message"]
        else:
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(call, 5)
        records = [(r.kind, r.decision, r.outcome) for r in broker.audit.records()]
    assert records == [("orchestrate", "cancelled", "nothing started")] and runner.started == []


async def test_a_declined_build_is_answered_even_when_the_audit_log_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with new_broker(tmp_path / "home") as broker:
        ctx = await ready(broker, tmp_path, board())
        broker.builtins[CONNECTION] = OrchestrateKind(broker, Answering(BuildAnswer.CANCEL), Starting())

        def full_disk(record: object) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(broker.audit, "record", full_disk)
        result = await broker.request(ctx, CONNECTION, "build", GOOD, ScriptedConfirmer())
    assert result["ok"] is False and result["error"]["code"] == "declined"
