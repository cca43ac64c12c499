"""The write pipeline on its own: the user's answer, the token and the audit record of every
outcome (a real token book and a real audit log; the write itself is a recorded coroutine)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from broker.audit import AuditLog
from broker.context import ExtensionFrame
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
