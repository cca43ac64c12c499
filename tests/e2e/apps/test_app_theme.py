"""MCP Apps get Helm's look in their host context — the same colours and text size as the
extension frames' CSS variables — and again when it changes (the SDK's App class, real view);
``prefers-color-scheme`` inside the app follows Helm's scheme, the user's choice over the system's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.apps.kit import Links, app_broker, app_host, in_app, open_frame
from tests.e2e.host.kit import Dialogs
from ui.preferences import Preferences
from ui.qt import QApplication, Qt
from ui.theme import Theme
from ui.theme_data import DARK, LIGHT, Appearance, Look, Scheme, css_variables

pytestmark = pytest.mark.usefixtures("mcp_app_server")
DARK_HEARD = """new Promise(resolve => {
  const heard = () => board.contexts.some(c => c.theme === "dark")
    ? resolve(board.contexts) : setTimeout(heard, 20);
  heard();
})"""
PREFERS_DARK = "matchMedia('(prefers-color-scheme: dark)').matches"
SCHEME_IS = """new Promise(resolve => {
  const now = () => matchMedia('(prefers-color-scheme: dark)').matches === %s
    ? resolve(true) : setTimeout(now, 20);
  now();
})"""


def test_an_app_gets_the_look_in_its_host_context_and_each_change_of_it(
    run: Any, tmp_path: Path, theme: Theme, qapp: QApplication
) -> None:
    async def scenario() -> tuple[Any, Any, list[Any]]:
        async with app_broker(tmp_path) as (broker, ext_id):
            host = app_host(broker, Dialogs(), Links())
            try:
                view = await open_frame(host, ext_id)
                first = await in_app(view, "board.host")
                prefers = [await in_app(view, PREFERS_DARK)]
                qapp.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
                changed = await in_app(view, DARK_HEARD)
                prefers.append(await in_app(view, SCHEME_IS % "true"))
                theme.follow(Preferences(appearance=Appearance.LIGHT))  # the user's choice, not the system's
                prefers.append(await in_app(view, SCHEME_IS % "false"))
                return first["value"], changed["value"], prefers
            finally:
                await host.aclose()

    first, changed, prefers = run(scenario(), timeout=60)
    assert prefers == [{"value": False}, {"value": True}, {"value": True}]
    light = first["styles"]["variables"]
    assert first["theme"] == "light"
    assert light["--color-background-primary"] == LIGHT.surface
    assert light["--font-text-md-size"] == css_variables(theme_look(theme, Scheme.LIGHT))["--helm-font-size"]
    dark = [c for c in changed if c.get("theme") == "dark"]
    assert dark, "the app heard that the look turned dark"
    assert dark[-1]["styles"]["variables"]["--color-background-primary"] == DARK.surface
    assert dark[-1]["styles"]["variables"]["--color-text-primary"] == DARK.text


def theme_look(theme: Theme, scheme: Scheme) -> Look:
    return Look(scheme, theme.look.font_pt, theme.look.font_family, theme.look.mono_family)
