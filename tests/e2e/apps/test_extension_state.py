"""``helm.state`` of an extension frame: kept by Helm under its home, per instance."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.host.kit import EchoHandler, copy_page, evaluate, make_view, wait_ready
from tests.helpers import new_broker


def test_helm_state_survives_a_new_frame_on_a_restarted_helm_and_is_per_instance(
    run: Any, tmp_path: Path
) -> None:
    folder = copy_page("probe", tmp_path / "ext")

    async def frame_state(instance: str, expression: str) -> Any:
        async with new_broker(tmp_path / "home") as broker:
            handler = broker
            view = make_view(folder, handler, instance=instance)
            try:
                await wait_ready(view)
                return await evaluate(view, expression)
            finally:
                await view.aclose()
                view._test_profile.deleteLater()  # type: ignore[attr-defined]

    async def scenario() -> tuple[Any, Any, Any, Any]:
        saved = await frame_state("dashboard", "helm.state.set({filter: 'open', seen: [1, 2]})")
        again = await frame_state("dashboard", "helm.state.get()")
        other = await frame_state("tool", "helm.state.get()")
        big = await frame_state(
            "tool", "helm.state.set('x'.repeat(70000)).then(() => 'stored', e => e.message)"
        )
        return saved, again, other, big

    saved, again, other, big = run(scenario(), timeout=90)
    assert saved is None
    assert again == {"filter": "open", "seen": [1, 2]}
    assert other is None
    assert big.startswith("helm.state: too_large")


def test_helm_state_is_frozen_beside_helm_call(run: Any, tmp_path: Path) -> None:
    folder = copy_page("probe", tmp_path / "ext")

    async def scenario() -> Any:
        view = make_view(folder, EchoHandler())
        try:
            await wait_ready(view)
            return await evaluate(
                view,
                "(() => { try { helm.state.get = () => 1; } catch (e) {} "
                "return [Object.isFrozen(helm), Object.isFrozen(helm.state), typeof helm.state.set]; })()",
            )
        finally:
            await view.aclose()

    assert run(scenario()) == [True, True, "function"]


def test_after_stop_a_frames_helm_state_is_refused_and_each_state_call_is_in_activity(
    run: Any, tmp_path: Path
) -> None:
    folder = copy_page("probe", tmp_path / "ext")

    async def scenario() -> tuple[Any, Any, list[tuple[str, str, str]]]:
        async with new_broker(tmp_path / "home") as broker:
            view = make_view(folder, broker)
            try:
                await wait_ready(view)
                before = await evaluate(view, "helm.state.set({n: 1}).then(() => 'stored')")
                broker.activity.stop("ws", "com.example.test")
                after = await evaluate(view, "helm.state.get().then(v => ['answered', v], e => e.message)")
            finally:
                await view.aclose()
                view._test_profile.deleteLater()  # type: ignore[attr-defined]
            return before, after, [(r.connection, r.operation, r.outcome) for r in broker.activity.recent]

    before, after, records = run(scenario(), timeout=90)
    assert before == "stored"
    assert after.startswith("helm.state: refused") and "the user stopped com.example.test" in after
    assert records == [("$state", "set", "ok"), ("$state", "get", "refused")]
