"""The broker's own cost per call, whatever the kind: a read through ``broker.call`` to a kind
that answers at once, against the same kind's ``execute`` awaited directly with the same call.

The difference is what every call pays before and after its kind runs: the rate limit, the
settings and manifest checks (a stat each), the approval decision, the argument bounds, the
activity record and the envelope. The test-only ``echo`` kind is used with a room that needs no
profile lookup, so the kind itself costs next to nothing.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from broker import CallContext
from broker.envelope import PLAIN
from broker.kinds import registered
from broker.kinds.base import Call
from tests.bench.conftest import Bench
from tests.helpers import manifest_dict, new_broker, setup_extension
from tests.kinds.echo import ECHO

ROOM = {"id": "e", "kind": "echo", "room": "lobby", "operations": ["hello"]}


class AtOnce:
    """A kind that answers every read at once, with its arguments."""

    async def execute(self, call: Call[Any]) -> dict[str, Any]:
        return PLAIN.success(dict(call.args), None)

    async def aclose(self) -> None:
        return None


async def test_the_brokers_own_cost_per_call(bench: Bench, tmp_path: Path) -> None:
    with registered(ECHO):
        async with new_broker(tmp_path / "home") as broker:
            ctx = await setup_extension(broker, tmp_path, manifest_dict([ROOM]))
            kind = broker.running._kinds[ECHO.name] = AtOnce()
            call = broker._resolve(ctx, "e", "hello", {"to": "you"}).call
            instances = itertools.count()

            async def through_broker() -> object:
                # A fresh instance per call: the bench measures the call, not the rate limit.
                fresh = CallContext(ctx.workspace, ctx.extension, f"b{next(instances)}")
                result = await broker.call(fresh, "e", "hello", {"to": "you"})
                assert result["ok"], result
                return result

            async def kind_alone() -> object:
                return await kind.execute(call)

            helm = min([await bench.atime(through_broker, repeat=2000) for _ in range(3)])
            alone = min([await bench.atime(kind_alone, repeat=2000) for _ in range(3)])
    bench.record(
        "broker: fixed cost of one read", helm, alone,
        note=f"vs the kind's execute alone; the broker adds {(helm - alone) * 1e6:.0f} µs",
    )  # fmt: skip
