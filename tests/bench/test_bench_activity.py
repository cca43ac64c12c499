"""The activity hook: a broker call with every call recorded against the same call unrecorded.

Both run the real broker on the same read of a small file, through ``request_json`` (the path
of every frame's call: the envelope comes back as JSON text); the "without" broker's activity
observer does nothing, so the ratio is what recording costs a call (the record, the counts, the
batch for the log on disk, the kill-switch check and the size of the envelope).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from broker import CallContext
from broker.activity import Activity, ActivityRecord, Watch
from tests.bench.conftest import Bench
from tests.helpers import ScriptedConfirmer, manifest_dict, new_broker, setup_extension

FILES = {"id": "notes", "kind": "files", "root": "workspace", "paths": ["*.md"], "operations": ["read"]}


class Unrecorded(Activity):
    """An observer that records nothing and never refuses."""

    def begin(self, ctx: CallContext, connection: str, operation: str) -> Watch:
        return Watch(ctx, connection, operation, None)

    def end(self, watch: Watch, result: Any) -> ActivityRecord:
        return ActivityRecord(0.0, "", "", "", "", "", 0.0, "", 0)


async def test_recording_every_call_costs_a_call_little(bench: Bench, tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        ctx = await setup_extension(broker, tmp_path, manifest_dict([FILES]))
        (tmp_path / "root" / "a.md").write_text("# a\n" * 200, encoding="utf-8")
        recorded, unrecorded = broker.activity, Unrecorded(tmp_path / "home")
        instances = itertools.count()

        async def read() -> object:
            # A fresh instance per call: the bench measures the call, not the rate limit.
            fresh = CallContext(ctx.workspace, ctx.extension, f"b{next(instances)}")
            text = await broker.request_json(fresh, "notes", "read", '{"path": "a.md"}', ScriptedConfirmer())
            assert text.startswith('{"ok":true')
            return text

        timings: dict[str, list[float]] = {"with": [], "without": []}
        for _ in range(3):  # interleaved, so a noisy neighbour slows both alike
            for name, activity in (("with", recorded), ("without", unrecorded)):
                broker.activity = activity
                timings[name].append(await bench.atime(read, repeat=300))
        broker.activity = recorded
    bench.record(
        "activity hook: files read with every call recorded", min(timings["with"]), min(timings["without"]),
        note="vs the same broker with a no-op observer",
    )  # fmt: skip
