"""The bridge in a real web view: calls go out through helm.call and results come back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.host.kit import EchoHandler, copy_page, evaluate, wait_ready


def test_a_page_call_reaches_the_handler_with_the_frames_identity_and_returns_the_result(
    run: Any, frames: Any, tmp_path: Path
) -> None:
    handler = EchoHandler()
    view = frames(copy_page("probe", tmp_path / "ext"), handler, instance="dash-3")

    async def scenario() -> Any:
        await wait_ready(view)
        return await evaluate(view, "probe.call('files', 'list', {project: 'p', n: 1})")

    result = run(scenario())
    assert result == {
        "ok": True,
        "data": {"connection": "files", "operation": "list", "args": {"project": "p", "n": 1}},
        "error": None,
    }
    assert [(c.workspace, c.extension, c.instance) for c in handler.seen] == [
        ("ws", "com.example.test", "dash-3")
    ]


def test_helm_orchestrate_goes_through_the_one_call_path_on_its_builtin_connection(
    run: Any, frames: Any, tmp_path: Path
) -> None:
    handler = EchoHandler()
    view = frames(copy_page("probe", tmp_path / "ext"), handler)
    move = "{connection: 'sp', operation: 'write', args: {path: 'a.md'}, label: 'Move'}"

    async def scenario() -> Any:
        await wait_ready(view)
        return await evaluate(
            view,
            "Promise.all([helm.orchestrate.build({task: 'T-1'}, {orWrite: " + move + "}),"
            " helm.orchestrate.build(), helm.orchestrate.status('build-1'),"
            " Promise.resolve(Object.isFrozen(helm.orchestrate))])",
        )

    build, plain, status, frozen = run(scenario())
    assert build["data"] == {
        "connection": "$orchestrate",
        "operation": "build",
        "args": {
            "input": {"task": "T-1"},
            "orWrite": {"connection": "sp", "operation": "write", "args": {"path": "a.md"}, "label": "Move"},
        },
    }
    assert plain["data"]["args"] == {"input": {}}
    assert status["data"] == {
        "connection": "$orchestrate",
        "operation": "status",
        "args": {"session": "build-1"},
    }
    assert frozen is True


def test_calls_made_at_once_each_get_their_own_answer(run: Any, frames: Any, tmp_path: Path) -> None:
    # More calls than one batch carries, made in one go: each answer reaches its own promise.
    handler = EchoHandler()
    view = frames(copy_page("probe", tmp_path / "ext"), handler)

    async def scenario() -> Any:
        await wait_ready(view)
        return await evaluate(
            view,
            "Promise.all(Array.from({length: 150}, (_, i) => helm.call('files', 'op' + i, {i: i})))"
            ".then(rs => rs.map(r => [r.data.operation, r.data.args.i]))",
        )

    assert run(scenario()) == [[f"op{i}", i] for i in range(150)]
    assert len(handler.seen) == 150
