"""What an app cannot do in Helm's frame, and what outlives it: the real web view, the real
SDK app, a canary counting every connection that reaches it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.apps.kit import Links, app_broker, app_host, in_app, open_frame
from tests.e2e.host.canary import canary
from tests.e2e.host.kit import Dialogs
from tests.helpers import new_broker

pytestmark = pytest.mark.usefixtures("mcp_app_server")


def test_declared_connect_and_resource_domains_stay_blocked_and_reach_nothing(
    run: Any, tmp_path: Path
) -> None:
    with canary() as bird:
        origin = f"http://127.0.0.1:{bird.port}"

        async def scenario() -> tuple[Any, Any, Any]:
            options = ("--connect", origin, "--resource", origin)
            async with app_broker(tmp_path, *options) as (broker, ext_id):
                host = app_host(broker, Dialogs(), Links())
                try:
                    view = await open_frame(host, ext_id)
                    fetched = await in_app(view, "board.fetchConnect()")
                    image = await in_app(
                        view,
                        "new Promise(r => { const i = document.getElementById('remote');"
                        " if (i.complete) r(i.naturalWidth); else { i.onload = () => r(i.naturalWidth);"
                        " i.onerror = () => r('error'); } })",
                    )
                    return fetched, image, await in_app(view, "window.violations")
                finally:
                    await host.aclose()

        fetched, image, violations = run(scenario(), timeout=90)
        count = bird.count
    assert fetched["value"].startswith("blocked")
    assert image["value"] in ("error", 0)
    assert {"connect-src", "img-src"} <= set(violations["value"])  # Helm's CSP stopped both
    assert count == 0


def test_a_changed_html_shows_what_changed_instead_of_running(run: Any, tmp_path: Path) -> None:
    extra = tmp_path / "extra.html"

    async def scenario() -> tuple[str, Any]:
        async with app_broker(tmp_path, "--extra", str(extra)) as (broker, ext_id):
            extra.write_text("<p>changed</p>", encoding="utf-8")
            host = app_host(broker, Dialogs(), Links())
            try:
                frame = host.frame("ws", ext_id, "i1")
                await frame.opening
                return frame.notice.text(), frame.view
            finally:
                await host.aclose()

    notice, view = run(scenario(), timeout=60)
    assert view is None
    assert "changed since you approved it" in notice
    assert "• the HTML changed" in notice


def test_the_app_answers_teardown_and_its_state_survives_a_restart_of_helm(run: Any, tmp_path: Path) -> None:
    async def scenario() -> tuple[bool, Any, Any]:
        async with app_broker(tmp_path) as (broker, ext_id):
            host = app_host(broker, Dialogs(), Links())
            view = await open_frame(host, ext_id)
            await in_app(view, "board.stateSet({tab: 'done', scroll: 120})")
            answered = await view.session.teardown("closing", within=10.0)
            torn = await in_app(view, "board.tornDown")
            await host.aclose()
        async with new_broker(tmp_path / "home") as broker:  # Helm started again on the same home
            host = app_host(broker, Dialogs(), Links())
            try:
                view = await open_frame(host, ext_id)
                return answered, torn, await in_app(view, "board.stateGet()")
            finally:
                await host.aclose()

    answered, torn, state = run(scenario(), timeout=90)
    assert answered is True and torn == {"value": True}
    assert state == {"value": {"state": {"tab": "done", "scroll": 120}}}
