"""``$orchestrate`` on the real broker: what is refused before the user is ever asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.commands.ext import format_review
from broker import Broker, CallContext
from broker.orchestrate.builds import Build, BuildAnswer, BuildPlan, BuildQuestion
from broker.orchestrate.kind import CONNECTION, OrchestrateKind
from broker.workspaces import add_project
from tests.helpers import ScriptedConfirmer, manifest_dict, new_broker, setup_extension

FILES = {"id": "sp", "kind": "files", "root": "project", "paths": ["*.md"], "operations": ["read", "write"]}
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
        pytest.param({"input": "T-1"}, "refused", "JSON object", id="input-not-object"),
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
