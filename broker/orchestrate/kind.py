"""``$orchestrate``: the built-in connection behind ``helm.orchestrate.build`` and ``.status``.

It runs inside the broker's one admission (``Broker.request``: the rate limit, the kill switch,
Activity), as every built-in connection does (``broker.builtin``). ``build``:

1. the extension's standing (approved, current), its ``orchestrate`` section, the input filled
   into the prompt, the project, and the agent the workspace runs builds with — a build that
   would be refused is refused before anything is shown;
2. with ``orWrite``, the write is the broker's own write target (``Broker.write_target``), sent
   through the one write pipeline: the Start build dialog *is* its confirmation (its token,
   binding and audit), so Start build alone and Cancel decline it, and the write alone and
   "… and start build" confirm it;
3. the build's start is recorded in the audit log before it starts (nothing starts when it
   cannot be), then handed to the ``BuildRunner`` (the Agents tab).

"… and start build" makes the write first and starts the build only when the write succeeded.
``status`` answers the state of one build of the same extension, never its transcript.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from broker import envelope
from broker.audit import AuditRecord
from broker.builtin import Handler
from broker.context import CallContext, ExtensionFrame
from broker.errors import CallError, ErrorCode, HelmError, PolicyRefusal, ProfileError, SettingsError
from broker.orchestrate.builds import (
    DEFAULT_LABEL,
    Build,
    BuildAnswer,
    BuildAsker,
    BuildPlan,
    BuildQuestion,
    BuildRunner,
    Builds,
    label_problem,
)
from broker.policy import decide as org
from broker.policy import in_force
from broker.settings import Workspace
from broker.summary import Decision, WriteSummary
from broker.writes import WriteTarget

if TYPE_CHECKING:
    from broker.broker import Broker

log = logging.getLogger("helm.orchestrate")

CONNECTION = "$orchestrate"
KIND = "orchestrate"
WRITE_KINDS = frozenset({"files", "http", "mcp"})
"""The kinds whose declared write a build can offer beside it."""

NO_WINDOW = "builds start only in Helm's window (the Agents tab shows them)"
NO_AGENT = (
    "no agent runs builds in workspace {ws!r}: choose one in its Workspace settings, or with "
    "helm workspace build-agent {ws} AGENT"
)
DECLINED_BUILD = "the user cancelled the build; nothing was started"


class OrchestrateKind:
    """``broker.builtins[CONNECTION]``; ``asker`` and ``runner`` are the window's (None: the
    command line, where builds are refused)."""

    def __init__(
        self, broker: Broker, asker: BuildAsker | None = None, runner: BuildRunner | None = None
    ) -> None:
        self.broker = broker
        self.asker = asker
        self.runner = runner
        self.builds = Builds()

    def handler(self, ctx: CallContext, operation: str) -> Handler:
        async def build(args: Mapping[str, Any]) -> Any:
            return await self.build(ctx, args)

        async def status(args: Mapping[str, Any]) -> Any:
            return self.status(ctx, args)

        async def unknown(args: Mapping[str, Any]) -> Any:
            raise CallError(ErrorCode.REFUSED, f"helm.orchestrate has no operation {operation!r}")

        return {"build": build, "status": status}.get(operation, unknown)

    # -- status ----------------------------------------------------------------------------
    def status(self, ctx: CallContext, args: Mapping[str, Any]) -> dict[str, Any]:
        build_id = args.get("session")
        if not isinstance(build_id, str):
            raise CallError(ErrorCode.REFUSED, "status needs the session a build returned")
        build = self.builds.of(ctx.workspace, ctx.extension, build_id)
        if build is None or not isinstance(ctx.who, ExtensionFrame):
            raise CallError(ErrorCode.REFUSED, f"no build {build_id[:80]!r} of this extension")
        return {"session": build.id, "state": build.state}

    # -- build -----------------------------------------------------------------------------
    async def build(self, ctx: CallContext, args: Mapping[str, Any]) -> dict[str, Any]:
        plan = self._plan(ctx, args.get("input", {}))
        or_write = args.get("orWrite")
        if or_write is None:
            answer = await self._ask(BuildQuestion(plan))
            if not answer.builds:
                self._record(plan, _unanswered(answer), "nothing started")
                raise CallError(ErrorCode.DECLINED, DECLINED_BUILD)
            return {"session": await self._start(plan)}
        target, label = await self._write_target(ctx, or_write)
        answered: list[BuildAnswer] = []

        async def confirm(summary: WriteSummary) -> Decision:
            answer = await self._ask(BuildQuestion(plan, summary, label))
            answered.append(answer)
            if answer is BuildAnswer.EXPIRED:
                return Decision.EXPIRED
            return Decision.CONFIRMED if answer.writes else Decision.DECLINED

        try:
            write = await self.broker.writes.request(target, confirm)
        except CallError as err:
            write = envelope.failure(target.kind, err, write=True)
            if not answered or answered[0] in (BuildAnswer.CANCEL, BuildAnswer.EXPIRED):
                if answered:  # else it was refused before the user was asked
                    self._record(plan, _unanswered(answered[0]), "nothing started")
                raise
        answer = answered[0]
        if answer is not BuildAnswer.BUILD and not write.get("ok"):
            if answer is BuildAnswer.BOTH:
                self._record(plan, "confirmed", "nothing started: the write failed")
            raise _failed_write(write)
        if answer is BuildAnswer.WRITE:
            self._record(plan, "declined", "nothing started")
            return {"write": write}
        try:
            return {"write": write, "session": await self._start(plan)}
        except CallError as err:  # the write's outcome is said all the same
            err.data = {"write": write}
            raise

    def _plan(self, ctx: CallContext, given: Any) -> BuildPlan:
        who = ctx.who
        if not isinstance(who, ExtensionFrame):
            raise CallError(ErrorCode.REFUSED, "only a tool extension can start builds")
        if self.asker is None or self.runner is None:
            raise CallError(ErrorCode.UNAVAILABLE, NO_WINDOW)
        try:
            decision = self.broker.standing(ctx.workspace, ctx.extension)
            workspace = self.broker.home.settings().workspace(ctx.workspace)
        except SettingsError as err:
            raise CallError(ErrorCode.NOT_CONFIGURED, str(err)) from None
        if not decision.allows_calls or decision.manifest is None:
            raise CallError(ErrorCode.REFUSED, decision.message)
        manifest = decision.manifest
        spec = manifest.orchestrate
        if spec is None or manifest.kind != "tool":
            raise CallError(
                ErrorCode.REFUSED, "this extension declares no build (its manifest's orchestrate)"
            )
        if not isinstance(given, Mapping):
            raise CallError(ErrorCode.REFUSED, "the build's input must be a JSON object")
        prompt = spec.fill(given)
        project: str | None = None
        folder = workspace.root
        if spec.root == "project":
            project = given.get("project")
            if not isinstance(project, str) or project not in workspace.projects:
                raise CallError(
                    ErrorCode.REFUSED,
                    "input.project must name a project of this workspace (the build runs there)",
                )
            folder = workspace.projects[project]
        agent = self._agent(workspace)
        named = ExtensionFrame(who.workspace, who.extension, who.instance, manifest.name)
        return BuildPlan(named, agent, project, folder, prompt, spec.write)

    def _agent(self, workspace: Workspace) -> str:
        """The agent that runs builds in ``workspace``, set up and allowed by the organisation."""
        agent = workspace.build_agent
        if agent is None:
            raise CallError(ErrorCode.NOT_CONFIGURED, NO_AGENT.format(ws=workspace.name))
        from broker.agents.profiles import AGENTS  # the agents' package loads the ACP SDK: not before

        try:
            found = AGENTS.store(self.broker.home, self.broker.credentials).get(agent)
        except ProfileError as err:
            raise CallError(ErrorCode.NOT_CONFIGURED, str(err)) from None
        if found is None:
            raise CallError(ErrorCode.NOT_CONFIGURED, f"the agent {agent!r} that runs builds is not set up")
        refusal = org.agent(in_force(), found.name, found.command)
        if refusal is not None:
            raise PolicyRefusal(refusal.rule, refusal.message)
        return agent

    async def _write_target(self, ctx: CallContext, or_write: Any) -> tuple[WriteTarget, str]:
        if not isinstance(or_write, Mapping):
            raise CallError(ErrorCode.REFUSED, "orWrite must be { connection, operation, args, label }")
        connection, operation = or_write.get("connection"), or_write.get("operation")
        write_args, label = or_write.get("args", {}), or_write.get("label", DEFAULT_LABEL)
        if not isinstance(connection, str) or not isinstance(operation, str):
            raise CallError(
                ErrorCode.REFUSED, "orWrite needs the connection and operation of a declared write"
            )
        if not isinstance(write_args, Mapping):
            raise CallError(ErrorCode.REFUSED, "orWrite.args must be a JSON object")
        problem = label_problem(label)
        if problem is not None:
            raise CallError(ErrorCode.REFUSED, problem)
        target = await self.broker.write_target(ctx, connection, operation, write_args)
        if target.kind not in WRITE_KINDS:
            raise CallError(ErrorCode.REFUSED, "a build can offer a files, http or mcp write only")
        return target, " ".join(str(label).split())

    async def _ask(self, question: BuildQuestion) -> BuildAnswer:
        """The user's answer; a call cancelled meanwhile (its extension stopped, its frame
        closed) is recorded ``cancelled`` / ``nothing started``, as a write's is."""
        assert self.asker is not None
        try:
            return await self.asker(question)
        except asyncio.CancelledError:
            self._record(question.plan, "cancelled", "nothing started")
            raise

    async def _start(self, plan: BuildPlan) -> str:
        """Record the build's start, then start it; its id."""
        assert self.runner is not None
        build = Build(plan.workspace, plan.requester.extension)
        try:
            self._record(plan, "confirmed", "starting", build.id, strict=True)
        except OSError:
            raise CallError(
                ErrorCode.UNAVAILABLE, "Helm cannot write its audit log; the build was not started"
            ) from None
        try:
            await self.runner.start(plan, build)
        except (SettingsError, ProfileError, HelmError) as err:
            self._record(plan, "confirmed", "not started", build.id)
            raise CallError(ErrorCode.UNAVAILABLE, f"the build could not start: {err}") from None
        self.builds.add(build)
        self._record(plan, "confirmed", "started", build.id)
        return build.id

    def _record(
        self, plan: BuildPlan, decision: str, outcome: str, build: str = "", *, strict: bool = False
    ) -> None:
        """One audit record of the build (the prompt is named by its digest, never logged)."""
        who = plan.requester
        record = AuditRecord(
            workspace=who.workspace,
            extension=who.extension,
            connection=CONNECTION,
            kind=KIND,
            operation="build",
            decision=decision,
            outcome=outcome,
            title="Start build",
            request_digest=plan.digest,
            decision_id=build,
            fields=(*(label for label, _ in plan.fields()), "Prompt"),
            requester=who.role,
            instance=who.instance,
        )
        try:
            self.broker.audit.record(record)
        except OSError as exc:
            if strict:
                raise
            log.error("the audit log cannot be written (%s): a build's %s not recorded", exc, outcome)


def _unanswered(answer: BuildAnswer) -> str:
    """The audit decision of a build the user did not start: ``expired`` when the write's
    confirmation ran out with the dialog open, else ``declined``."""
    return "expired" if answer is BuildAnswer.EXPIRED else "declined"


def _failed_write(write: dict[str, Any]) -> CallError:
    """The write's failure as the answer's error, with what happened in ``data``."""
    error = write.get("error") or {}
    try:
        code = ErrorCode(str(error.get("code")))
    except ValueError:
        code = ErrorCode.UNAVAILABLE
    return CallError(code, str(error.get("message", "the write failed")), data={"write": write})
