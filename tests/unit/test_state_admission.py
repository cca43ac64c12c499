"""``helm.state`` is a built-in connection: it passes the broker's one admission like any call."""

from __future__ import annotations

import json
from pathlib import Path

from broker import Broker, CallContext
from broker.ratelimit import CALLS_PER_MINUTE
from tests.helpers import ScriptedConfirmer, manifest_dict, new_broker, setup_extension

STATE = "$state"


async def _ctx(broker: Broker, tmp_path: Path) -> CallContext:
    return await setup_extension(broker, tmp_path, manifest_dict([]))


async def state(broker: Broker, ctx: CallContext, operation: str, args: str) -> dict[str, object]:
    answer: dict[str, object] = json.loads(
        await broker.request_json(ctx, STATE, operation, args, ScriptedConfirmer())
    )
    return answer


async def test_state_answers_envelopes_over_the_bridge(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        ctx = await _ctx(broker, tmp_path)
        stored = await state(broker, ctx, "set", '{"value": {"n": 1}}')
        got = await state(broker, ctx, "get", "{}")
        odd = await state(broker, ctx, "delete", "{}")
        shapeless = await state(broker, ctx, "set", '"value"')
    assert stored == {"ok": True, "data": None, "error": None}
    assert got["data"] == {"n": 1}
    assert odd["error"] == {"code": "refused", "message": "helm.state offers get and set"}
    assert shapeless["error"] == {"code": "refused", "message": "the arguments must be a JSON object"}


async def test_a_stopped_extension_gets_no_state_and_its_state_calls_are_in_activity(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        ctx = await _ctx(broker, tmp_path)
        before = await state(broker, ctx, "set", '{"value": "kept"}')
        broker.activity.stop(ctx.workspace, ctx.extension)
        got = await state(broker, ctx, "get", "{}")
        put = await state(broker, ctx, "set", '{"value": "overwritten"}')
        broker.activity.resume(ctx.workspace, ctx.extension)
        after = await state(broker, ctx, "get", "{}")
        records = [(r.connection, r.operation, r.outcome) for r in broker.activity.recent]
    assert before["ok"] and after["data"] == "kept"
    for refused in (got, put):
        assert refused["error"]["code"] == "refused"  # type: ignore[index]
        assert "the user stopped com.example.test" in refused["error"]["message"]  # type: ignore[index]
    assert records == [
        (STATE, "set", "ok"), (STATE, "get", "refused"), (STATE, "set", "refused"), (STATE, "get", "ok"),
    ]  # fmt: skip


async def test_state_calls_spend_the_instance_rate_limit_and_another_frame_keeps_its_own(
    tmp_path: Path,
) -> None:
    async with new_broker(tmp_path / "home") as broker:
        ctx = await _ctx(broker, tmp_path)
        answers = [
            await state(broker, ctx, "set", json.dumps({"value": i})) for i in range(CALLS_PER_MINUTE + 5)
        ]
        other = await broker.request_json(
            CallContext(ctx.workspace, ctx.extension, "other"), STATE, "get", "{}", ScriptedConfirmer()
        )
    codes = [a["error"]["code"] if not a["ok"] else "ok" for a in answers]  # type: ignore[index]
    assert codes == ["ok"] * CALLS_PER_MINUTE + ["rate_limited"] * 5
    assert json.loads(other)["ok"]  # another frame has its own budget
    assert "retryAfter" in answers[-1]["error"]  # type: ignore[operator]


async def test_an_oversized_state_call_is_refused_unread_and_recorded(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        ctx = await _ctx(broker, tmp_path)
        big = await state(broker, ctx, "set", json.dumps({"value": "x" * (70 * 1024)}))
        huge = await state(broker, ctx, "set", json.dumps({"value": "x" * (300 * 1024)}))
        outcomes = [r.outcome for r in broker.activity.recent]
    assert big["error"]["code"] == "too_large"  # type: ignore[index]
    assert huge["error"]["code"] == "too_large"  # type: ignore[index]
    assert outcomes == ["too_large", "too_large"]
