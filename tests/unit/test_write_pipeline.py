"""The write pipeline on its own: the user's answer, the token and the audit record of every
outcome (a real token book and a real audit log; the write itself is a recorded coroutine)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from broker.audit import AuditLog
from broker.context import ExtensionFrame
from broker.decision_point import PointRequest, PointVerdict
from broker.errors import CallError, ErrorCode
from broker.jsonutil import digest
from broker.kinds.base import WriteDetails
from broker.summary import Decision, WriteSummary
from broker.tokens import Redemption, TokenBook
from broker.writes import Prepared, WritePipeline, WriteTarget


class World:
    def __init__(self, home: Path) -> None:
        self.version: object = object()
        self.pipeline = WritePipeline(TokenBook(), AuditLog.in_home(home), lambda: self.version)
        self.audit = AuditLog.in_home(home)
        self.binding: dict[str, Any] = {"url": "https://api.example.com/x", "body": "a"}
        self.prepared = 0
        self.sent: list[dict[str, Any]] = []
        self.result: dict[str, Any] = {"ok": True, "data": 1}
        self.send_raises: BaseException | None = None
        self.prepare_raises: CallError | None = None
        self.target = WriteTarget(
            ExtensionFrame("ws", "com.example.a", name="A"), "api", "post", "http", self._prepare
        )

    async def _prepare(self) -> Prepared:
        self.prepared += 1
        if self.prepare_raises is not None and self.prepared > 1:
            raise self.prepare_raises
        binding = dict(self.binding)

        async def send() -> dict[str, Any]:
            if self.send_raises is not None:
                raise self.send_raises
            self.sent.append(binding)
            return self.result

        details = WriteDetails(
            "Post a", (("URL", binding["url"]), ("Body", binding["body"])), "POST", binding
        )
        return Prepared(details, send)

    def outcomes(self) -> list[tuple[str, str]]:
        return [(r.decision, r.outcome) for r in self.audit.records()]

    def spent(self, summary: WriteSummary) -> bool:
        binding = self.target.binding(WriteDetails("", (), "", self.binding))
        return self.pipeline.tokens.redeem(summary.token, binding) is Redemption.UNKNOWN


class Answer:
    def __init__(self, decision: Decision, before: Any = None) -> None:
        self.decision, self.before = decision, before
        self.summaries: list[WriteSummary] = []

    async def __call__(self, summary: WriteSummary) -> Decision:
        self.summaries.append(summary)
        if self.before is not None:
            self.before()
        return self.decision


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


async def test_a_confirmed_write_is_sent_once_as_shown_and_audited_with_its_outcome(world: World) -> None:
    answer = Answer(Decision.CONFIRMED)
    assert await world.pipeline.request(world.target, answer) == {"ok": True, "data": 1}
    assert world.sent == [world.binding]
    assert world.prepared == 1
    assert world.outcomes() == [("confirmed", "sending"), ("confirmed", "ok")]
    record = list(world.audit.records())[-1]
    assert (record.title, record.fields, record.request_digest) == (
        "Post a",
        ("URL", "Body"),
        digest(world.binding),
    )
    assert world.spent(answer.summaries[0])


@pytest.mark.parametrize(
    ("decision", "code"),
    [(Decision.DECLINED, ErrorCode.DECLINED), (Decision.EXPIRED, ErrorCode.CONFIRMATION_REQUIRED)],
)
async def test_a_declined_or_expired_dialog_sends_nothing_spends_its_token_and_is_audited(
    world: World, decision: Decision, code: ErrorCode
) -> None:
    answer = Answer(decision)
    with pytest.raises(CallError) as caught:
        await world.pipeline.request(world.target, answer)
    assert caught.value.code is code
    assert world.sent == []
    assert world.outcomes() == [(decision.value, "nothing sent")]
    assert world.spent(answer.summaries[0])


async def test_a_dialog_cancelled_by_a_closing_frame_spends_its_token_and_is_audited(world: World) -> None:
    seen: list[WriteSummary] = []

    async def never(summary: WriteSummary) -> Decision:
        seen.append(summary)
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    task = asyncio.ensure_future(world.pipeline.request(world.target, never))
    while not seen:
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert world.sent == []
    assert world.outcomes() == [("cancelled", "nothing sent")]
    assert world.spent(seen[0])


async def test_settings_unchanged_under_the_dialog_prepare_the_write_once(world: World) -> None:
    await world.pipeline.request(world.target, Answer(Decision.CONFIRMED))
    assert world.prepared == 1


async def test_settings_changed_under_the_dialog_prepare_again_and_send_what_still_matches(
    world: World,
) -> None:
    def edit() -> None:
        world.version = object()

    await world.pipeline.request(world.target, Answer(Decision.CONFIRMED, edit))
    assert world.prepared == 2
    assert world.sent == [world.binding]


async def test_a_request_changed_by_settings_under_the_dialog_is_refused_and_audited(world: World) -> None:
    def edit() -> None:
        world.version = object()
        world.binding = {**world.binding, "url": "https://other.example.com/x"}

    with pytest.raises(CallError) as caught:
        await world.pipeline.request(world.target, Answer(Decision.CONFIRMED, edit))
    assert caught.value.code is ErrorCode.CONFIRMATION_REQUIRED
    assert "different request" in caught.value.message
    assert world.sent == []
    assert world.outcomes() == [("refused", "nothing sent")]


async def test_a_write_that_can_no_longer_be_prepared_spends_its_token(world: World) -> None:
    def edit() -> None:
        world.version = object()
        world.prepare_raises = CallError(ErrorCode.NOT_CONFIGURED, "the profile is gone")

    answer = Answer(Decision.CONFIRMED, edit)
    with pytest.raises(CallError, match="the profile is gone"):
        await world.pipeline.request(world.target, answer)
    assert world.sent == []
    assert world.spent(answer.summaries[0])


async def test_a_send_that_raised_is_audited_with_its_error_code(world: World) -> None:
    world.send_raises = CallError(ErrorCode.UNAVAILABLE, "the service failed")
    with pytest.raises(CallError):
        await world.pipeline.request(world.target, Answer(Decision.CONFIRMED))
    assert world.outcomes() == [("confirmed", "sending"), ("confirmed", "unavailable")]


async def test_a_write_cancelled_while_sending_is_audited_as_cancelled(world: World) -> None:
    world.send_raises = asyncio.CancelledError()
    with pytest.raises(asyncio.CancelledError):
        await world.pipeline.request(world.target, Answer(Decision.CONFIRMED))
    assert world.outcomes() == [("confirmed", "sending"), ("confirmed", "cancelled")]


@pytest.mark.parametrize(
    ("result", "outcome"),
    [({"ok": False, "error": {"code": "conflict"}}, "conflict"), ({"ok": False, "error": "odd"}, "odd")],
)
async def test_a_write_the_service_refused_is_audited_with_its_error(
    world: World, result: dict[str, Any], outcome: str
) -> None:
    world.result = result
    assert await world.pipeline.request(world.target, Answer(Decision.CONFIRMED)) == result
    assert world.outcomes() == [("confirmed", "sending"), ("confirmed", outcome)]


async def test_the_two_step_flow_needs_a_token_and_spends_it(world: World) -> None:
    with pytest.raises(CallError) as caught:
        await world.pipeline.send(world.target, None)
    assert caught.value.code is ErrorCode.CONFIRMATION_REQUIRED
    summary = await world.pipeline.describe(world.target)
    assert await world.pipeline.send(world.target, summary.token) == world.result
    with pytest.raises(CallError, match="unknown or was already used"):
        await world.pipeline.send(world.target, summary.token)
    assert world.outcomes() == [("confirmed", "sending"), ("confirmed", "ok"), ("refused", "nothing sent")]
    assert world.sent == [world.binding]


async def test_an_expired_token_is_refused_and_audited_as_expired(world: World) -> None:
    now = [0.0]
    world.pipeline.tokens = TokenBook(lambda: now[0])
    summary = await world.pipeline.describe(world.target)
    now[0] = 300.0
    with pytest.raises(CallError, match="expired"):
        await world.pipeline.send(world.target, summary.token)
    assert world.outcomes() == [("expired", "nothing sent")]
    assert world.sent == []


async def test_a_confirmed_write_the_audit_log_cannot_record_is_not_sent(
    world: World, tmp_path: Path
) -> None:
    (tmp_path / "not-a-folder").write_text("", encoding="utf-8")
    world.pipeline.audit = AuditLog(tmp_path / "not-a-folder" / "audit.jsonl")
    with pytest.raises(CallError) as caught:
        await world.pipeline.request(world.target, Answer(Decision.CONFIRMED))
    assert caught.value.code is ErrorCode.UNAVAILABLE
    assert "nothing was sent" in caught.value.message
    assert world.sent == []


# -- the organisation's decision point --------------------------------------------------------
class Point:
    """The decision point as the pipeline sees it: a scripted verdict, and what it was asked."""

    def __init__(self, verdict: PointVerdict | None) -> None:
        self.verdict = verdict
        self.asked: list[tuple[PointRequest, bool]] = []

    async def ask(self, request: PointRequest, *, write: bool = False) -> PointVerdict | None:
        self.asked.append((request, write))
        return self.verdict


def points(world: World) -> list[tuple[str, str, str, str, str]]:
    return [(r.decision, r.outcome, r.point_verdict, r.point_decision_id, r.point_receipt_id)
            for r in world.audit.records()]  # fmt: skip


@pytest.mark.parametrize("verdict", ["DENY", "ESCALATE", "PENDING"])
async def test_a_write_the_decision_point_refuses_is_refused_unasked_unsent_and_audited(
    world: World, verdict: str
) -> None:
    world.pipeline.point = Point(PointVerdict(verdict, "d-1", "r-1"))
    answer = Answer(Decision.CONFIRMED)
    with pytest.raises(CallError) as caught:
        await world.pipeline.request(world.target, answer)
    assert caught.value.code is ErrorCode.REFUSED
    assert caught.value.message.endswith("(decision d-1); nothing was sent")
    assert "refused: your organisation's decision point" in caught.value.message
    assert answer.summaries == [] and world.sent == []
    assert points(world) == [("refused", "nothing sent", verdict, "d-1", "r-1")]
    [record] = world.audit.records()
    assert record.reason == PointVerdict(verdict, "d-1", "r-1").refusal()


async def test_a_decision_point_that_failed_refuses_with_its_problem(world: World) -> None:
    world.pipeline.point = Point(PointVerdict("ERROR", problem="no answer within 10 s"))
    with pytest.raises(CallError, match=r"gave no usable answer \(no answer within 10 s\); nothing was sent"):
        await world.pipeline.request(world.target, Answer(Decision.CONFIRMED))
    assert points(world) == [("refused", "nothing sent", "ERROR", "", "")]


async def test_an_allowed_write_still_asks_the_user_and_every_record_carries_the_verdict(
    world: World,
) -> None:
    point = Point(PointVerdict("ALLOW", "d-2", "r-2"))
    world.pipeline.point = point
    answer = Answer(Decision.CONFIRMED)
    assert await world.pipeline.request(world.target, answer) == world.result
    assert len(answer.summaries) == 1 and world.sent == [world.binding]
    assert points(world) == [
        ("confirmed", "sending", "ALLOW", "d-2", "r-2"),
        ("confirmed", "ok", "ALLOW", "d-2", "r-2"),
    ]
    assert [r.reason for r in world.audit.records()] == ["", ""]
    [(request, write)] = point.asked
    assert write is True
    assert request == PointRequest(
        resource="tool.helm.http.api",
        tool="post",
        args=world.binding,
        session_id="cli",
        risk_class="T2",
        effect_class="E3",
        context={
            "workspace": "ws",
            "requester": {"role": "extension", "id": "com.example.a", "instance": "cli"},
            "connection": "api",
            "kind": "http",
            "request_digest": digest(world.binding),
            "write": True,
        },
    )


@pytest.mark.parametrize("decision", [Decision.DECLINED, Decision.EXPIRED])
async def test_a_write_allowed_by_the_decision_point_but_not_by_the_user_is_audited_with_both(
    world: World, decision: Decision
) -> None:
    world.pipeline.point = Point(PointVerdict("ALLOW", "d-3", "r-3"))
    with pytest.raises(CallError):
        await world.pipeline.request(world.target, Answer(decision))
    assert points(world) == [(decision.value, "nothing sent", "ALLOW", "d-3", "r-3")]


async def test_an_allowed_write_cancelled_under_the_dialog_or_failing_is_audited_with_the_verdict(
    world: World,
) -> None:
    world.pipeline.point = Point(PointVerdict("ALLOW", "d-4", "r-4"))
    world.send_raises = CallError(ErrorCode.UNAVAILABLE, "the service failed")
    with pytest.raises(CallError):
        await world.pipeline.request(world.target, Answer(Decision.CONFIRMED))
    world.send_raises = asyncio.CancelledError()
    with pytest.raises(asyncio.CancelledError):
        await world.pipeline.request(world.target, Answer(Decision.CONFIRMED))

    async def cancelled(summary: WriteSummary) -> Decision:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await world.pipeline.request(world.target, cancelled)
    assert [p[1:3] for p in points(world)] == [
        ("sending", "ALLOW"), ("unavailable", "ALLOW"), ("sending", "ALLOW"), ("cancelled", "ALLOW"),
        ("nothing sent", "ALLOW"),
    ]  # fmt: skip


async def test_the_two_step_flow_asks_the_decision_point_and_a_refusal_spends_the_token(world: World) -> None:
    summary = await world.pipeline.describe(world.target)
    world.pipeline.point = Point(PointVerdict("DENY", "d-5", "r-5"))
    with pytest.raises(CallError, match="denied it"):
        await world.pipeline.send(world.target, summary.token)
    assert world.spent(summary)
    world.pipeline.point = Point(PointVerdict("ALLOW", "d-6", "r-6"))
    with pytest.raises(CallError, match="unknown or was already used"):
        await world.pipeline.send(world.target, summary.token)
    summary = await world.pipeline.describe(world.target)
    assert await world.pipeline.send(world.target, summary.token) == world.result
    assert points(world)[-1] == ("confirmed", "ok", "ALLOW", "d-6", "r-6")


async def test_no_decision_point_to_ask_leaves_the_records_as_they_were(world: World) -> None:
    point = Point(None)
    world.pipeline.point = point
    assert await world.pipeline.request(world.target, Answer(Decision.CONFIRMED)) == world.result
    assert points(world) == [("confirmed", "sending", "", "", ""), ("confirmed", "ok", "", "", "")]
    assert len(point.asked) == 1


async def test_a_file_write_is_classed_e2_and_a_huge_request_reaches_the_decision_point_as_too_large(
    world: World,
) -> None:
    point = Point(PointVerdict("ALLOW", "d", "r"))
    world.pipeline.point = point
    world.target = WriteTarget(ExtensionFrame("ws", "com.example.a", "w1"), "notes", "write", "files",
                               world.target.prepare)  # fmt: skip
    world.binding = {"url": "u", "body": "x" * (64 * 1024 - 23)}  # one past 64 KiB of JSON
    await world.pipeline.request(world.target, Answer(Decision.CONFIRMED))
    [(request, _)] = point.asked
    assert (request.resource, request.risk_class, request.effect_class) == (
        "tool.helm.files.notes",
        "T2",
        "E2",
    )
    assert request.args == {"too_large": True}
    assert request.session_id == "w1"
    world.binding = {"url": "u", "body": "x" * (64 * 1024 - 24)}  # exactly 64 KiB
    await world.pipeline.request(world.target, Answer(Decision.CONFIRMED))
    assert point.asked[1][0].args == world.binding
